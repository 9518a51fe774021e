"""The HTTP/1.1 protocol uvicorn serves mnemo with: uvicorn's h11 one, except that a request it cannot
parse (a header with a bare line feed, a malformed request line) is answered with mnemo's JSON error
envelope instead of uvicorn's plain text, so every 400 a client sees reads the same way.

Served with `uvicorn --http app.http.protocol:EnvelopeH11Protocol` (scripts/run.sh, entrypoint.sh, the
tests' and benchmarks' servers)."""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DETAIL = (
    "the request is not well-formed HTTP/1.1 (a header holding a bare line feed or a control character, "
    "or a malformed request line) (请求不是合法的 HTTP/1.1)"
)


class EnvelopeH11Protocol(H11Protocol):
    status_code = 400
    code = "invalid_request"

    def send_400_response(self, msg: str) -> None:
        # the envelope of a request no route saw (so it has no request id)
        envelope = {"error": self.code, "detail": f"{DETAIL}: {msg}", "request_id": ""}
        body = json.dumps(envelope, ensure_ascii=False).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"connection", b"close"),
        ]
        self.transport.write(
            self.conn.send(h11.Response(status_code=self.status_code, headers=headers, reason=b"Bad Request"))
        )
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()


HTTP_PROTOCOL = f"{__name__}:{EnvelopeH11Protocol.__name__}"  # uvicorn's --http value
