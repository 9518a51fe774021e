# Stand-in for python:3.11-slim: Debian bookworm's Python 3.11 at the paths the real image uses
# (/usr/local/bin/python, python3, pip), with ensurepip for `python -m venv`.
FROM local/debian:bookworm
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv python3-pip ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s /usr/bin/python3 /usr/local/bin/python \
    && ln -s /usr/bin/pip3 /usr/local/bin/pip \
    && rm -f /usr/lib/python3.11/EXTERNALLY-MANAGED
# this machine's CA bundle (builds reach PyPI through a TLS-intercepting proxy)
COPY host-ca.crt /etc/ssl/certs/mnemo-host-ca.crt
RUN printf '[global]\ncert = /etc/ssl/certs/mnemo-host-ca.crt\n' > /etc/pip.conf
ENV LANG=C.UTF-8
CMD ["python3"]
