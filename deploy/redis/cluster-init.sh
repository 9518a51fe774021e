#!/bin/sh
# One-shot job of docker-compose.cluster.yml (redis:7-alpine, busybox sh): joins the Redis nodes of
# REDIS_CLUSTER_NODES into one Redis Cluster, 3 masters and 3 replicas, then exits 0 once every node
# says cluster_state:ok. The app and the writers start only after it succeeded.
#
# Safe to run on every `up`:
#   - every node already says cluster_state:ok: nothing to do;
#   - the nodes already know each other (nodes.conf on their volumes) but the cluster is not ok yet,
#     e.g. just restarted and still reconnecting: wait for it, never create it a second time;
#   - only a brand-new set of nodes (each knowing only itself) gets `redis-cli --cluster create`.
set -eu

nodes="${REDIS_CLUSTER_NODES:?REDIS_CLUSTER_NODES is not set}"
wait_seconds="${CLUSTER_WAIT_SECONDS:-60}"
node_list=$(printf '%s' "$nodes" | tr ',' ' ')

log() { printf '%s redis-cluster-init: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }

# field NODE NAME: one field of the node's CLUSTER INFO (empty when the node does not answer)
field() {
    redis-cli -h "${1%:*}" -p "${1##*:}" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"
}

all_ok() {
    for node in $node_list; do
        [ "$(field "$node" cluster_state)" = ok ] || return 1
    done
}

wait_all_ok() {
    waited=0
    until all_ok; do
        if [ "$waited" -ge "$wait_seconds" ]; then
            log "ERROR: the cluster is not ok on every node after ${wait_seconds}s:"
            for node in $node_list; do
                log "  $node: cluster_state=$(field "$node" cluster_state) known_nodes=$(field "$node" cluster_known_nodes)"
            done
            log "a node that lost its volume knows only itself: re-add it (redis-cli --cluster add-node) or recreate all volumes"
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
}

if all_ok; then
    log "cluster already formed (cluster_state:ok on every node): nothing to do"
    exit 0
fi

# the largest node count any node knows: above 1, some node is already in a cluster
known=1
for node in $node_list; do
    count=$(field "$node" cluster_known_nodes)
    if [ "${count:-0}" -gt "$known" ]; then known=$count; fi
done
if [ "$known" -gt 1 ]; then
    log "the nodes already form a cluster ($known known): waiting up to ${wait_seconds}s for cluster_state:ok"
    wait_all_ok
    log "cluster ok"
    exit 0
fi

log "creating the cluster: $node_list (1 replica per master)"
# shellcheck disable=SC2086  # one argument per node
redis-cli --cluster create $node_list --cluster-replicas 1 --cluster-yes
wait_all_ok
log "cluster created and ok on every node"
