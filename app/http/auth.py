"""Bearer JWT authentication (HS256 with AUTH_JWT_SECRET) and per-user authorisation."""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

import jwt

from app.http.errors import Forbidden, Unauthorized
from app.http.ids import is_valid_id

ALGORITHM = "HS256"
ADMIN_ROLE = "admin"
LEEWAY_SECONDS = 30
NUMERIC_DATE_CLAIMS = ("exp", "iat", "nbf")


# the last second of the year 9999: a date claim past it is not a date (and 10^400 overflows a float)
MAX_NUMERIC_DATE = 253_402_300_799


def _is_numeric_date(value: object) -> bool:
    """RFC 7519 NumericDate: a JSON number, here between 1970 and the end of the year 9999. PyJWT would
    take "9999999999" (it calls int())."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return 0 <= value <= MAX_NUMERIC_DATE and (isinstance(value, int) or math.isfinite(value))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's `sub`, and whether it may act for any user."""

    user_id: str
    role: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN_ROLE


class TokenCodec:
    """Mints (HS256) and verifies tokens. Accepted: HS256 signed with the shared secret, and RS256 signed
    by an identity provider when its public key is configured. `none` and every other algorithm fail;
    the algorithm is pinned per key, so an RS256 public key can never be used as an HMAC secret."""

    def __init__(
        self,
        secret: str,
        *,
        public_key: str | None = None,
        audience: str | None = None,
        issuer: str | None = None,
    ) -> None:
        self._secret = secret
        self._public_key = public_key
        self._audience = audience
        self._issuer = issuer
        # a key derived from the secret: log lines can correlate one user's requests without naming
        # them, and a leaked log cannot be reversed with a dictionary of likely user ids
        self._digest_key = hashlib.blake2b(b"mnemo-log-user|" + secret.encode(), digest_size=32).digest()

    def digest(self, user_id: str) -> str:
        """A stable, keyed, non-reversible stand-in for a user id in logs."""
        return hashlib.blake2b(user_id.encode(), key=self._digest_key, digest_size=8).hexdigest()

    def mint(self, sub: str, *, role: str | None = None, ttl_seconds: int = 3600) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {"sub": sub, "iat": now, "exp": now + ttl_seconds}
        if self._audience:
            claims["aud"] = self._audience
        if self._issuer:
            claims["iss"] = self._issuer
        if role:
            claims["role"] = role
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify(self, token: str) -> Principal:
        try:
            alg = jwt.get_unverified_header(token).get("alg")
            key, algorithm = (
                (self._public_key, "RS256")
                if alg == "RS256" and self._public_key
                else (self._secret, ALGORITHM)
            )
            required = (
                ["exp", "sub"] + (["aud"] if self._audience else []) + (["iss"] if self._issuer else [])
            )
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                options={"require": required},
                audience=self._audience,
                issuer=self._issuer,
                leeway=LEEWAY_SECONDS,
            )
        except jwt.ExpiredSignatureError as exc:
            raise Unauthorized("token has expired", code="token_expired") from exc
        except jwt.InvalidTokenError as exc:
            raise Unauthorized(f"invalid token: {exc}", code="invalid_token") from exc
        except (OverflowError, ValueError) as exc:  # a date claim beyond any float (exp = 10^400)
            raise Unauthorized("invalid token: a date claim is out of range", code="invalid_token") from exc
        for claim in NUMERIC_DATE_CLAIMS:
            if claim in claims and not _is_numeric_date(claims[claim]):
                raise Unauthorized(
                    f"invalid token: '{claim}' must be a number of seconds between 1970 and 9999",
                    code="invalid_token",
                )
        sub = claims.get("sub")
        if not is_valid_id(sub):
            raise Unauthorized("token subject is not a valid user id", code="invalid_token")
        role = claims.get("role")
        return Principal(user_id=sub, role=role if isinstance(role, str) else None)


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("missing Authorization: Bearer <token> header", code="missing_token")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("Authorization header must be 'Bearer <token>'", code="missing_token")
    return token


def ensure_can_act_for(principal: Principal, user_id: str) -> None:
    """Users act on their own data only; admins on anyone's."""
    if principal.is_admin or principal.user_id == user_id:
        return
    raise Forbidden("this token may not act for another user")
