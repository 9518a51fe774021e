from __future__ import annotations

import base64
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from app.http.auth import Principal, TokenCodec, bearer_token, ensure_can_act_for
from app.http.errors import Forbidden, Unauthorized

SECRET = "s" * 48


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


class TestVerify:
    def test_minted_token_round_trips(self) -> None:
        codec = TokenCodec(SECRET)
        principal = codec.verify(codec.mint("alice", role="admin"))
        assert principal == Principal(user_id="alice", role="admin")
        assert principal.is_admin

    def test_expired_token(self) -> None:
        token = jwt.encode({"sub": "alice", "exp": int(time.time()) - 3600}, SECRET, algorithm="HS256")
        with pytest.raises(Unauthorized) as info:
            TokenCodec(SECRET).verify(token)
        assert info.value.code == "token_expired"
        assert info.value.headers["WWW-Authenticate"] == "Bearer"

    def test_other_secret(self) -> None:
        token = TokenCodec("o" * 48).mint("alice")
        with pytest.raises(Unauthorized, match="invalid token"):
            TokenCodec(SECRET).verify(token)

    def test_alg_none_is_rejected(self) -> None:
        token = f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({'sub': 'alice', 'exp': time.time() + 60})}."
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify(token)

    @pytest.mark.parametrize("alg", ["HS384", "HS512"])
    def test_other_hmac_algorithms_are_rejected(self, alg: str) -> None:
        token = jwt.encode({"sub": "alice", "exp": int(time.time()) + 60}, SECRET, algorithm=alg)
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify(token)

    def test_rs256_is_rejected(self) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        token = jwt.encode({"sub": "alice", "exp": int(time.time()) + 60}, key, algorithm="RS256")
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify(token)

    def test_exp_is_required(self) -> None:
        token = jwt.encode({"sub": "alice"}, SECRET, algorithm="HS256")
        with pytest.raises(Unauthorized, match="exp"):
            TokenCodec(SECRET).verify(token)

    @pytest.mark.parametrize("sub", ["", "a b", "x{y}", "a/b", "用户"])
    def test_subject_must_be_a_valid_user_id(self, sub: str) -> None:
        token = jwt.encode({"sub": sub, "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify(token)

    def test_garbage(self) -> None:
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify("not-a-jwt")


class TestBearerHeader:
    @pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer   ", "Basic abc", "token abc"])
    def test_malformed_header(self, header: str | None) -> None:
        with pytest.raises(Unauthorized) as info:
            bearer_token(header)
        assert info.value.code == "missing_token"

    def test_scheme_is_case_insensitive(self) -> None:
        assert bearer_token("bearer abc.def.ghi") == "abc.def.ghi"


class TestActFor:
    def test_self(self) -> None:
        ensure_can_act_for(Principal("alice"), "alice")

    def test_admin_for_anyone(self) -> None:
        ensure_can_act_for(Principal("root", role="admin"), "alice")

    def test_other_user_is_forbidden(self) -> None:
        with pytest.raises(Forbidden):
            ensure_can_act_for(Principal("bob"), "alice")

    def test_non_admin_role_is_not_enough(self) -> None:
        with pytest.raises(Forbidden):
            ensure_can_act_for(Principal("bob", role="editor"), "alice")


class TestIdentityProviderTokens:
    """RS256 from an identity provider, audience/issuer checks, clock-skew leeway."""

    def _keys(self) -> tuple[rsa.RSAPrivateKey, str]:
        from cryptography.hazmat.primitives import serialization

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = (
            key.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )
        return key, pem

    def test_rs256_accepted_with_the_configured_public_key(self) -> None:
        key, pem = self._keys()
        codec = TokenCodec(SECRET, public_key=pem)
        token = jwt.encode(
            {"sub": "alice", "exp": int(time.time()) + 60, "role": "admin"}, key, algorithm="RS256"
        )
        assert codec.verify(token) == Principal("alice", "admin")
        # HS256 with the shared secret still works beside it
        assert codec.verify(TokenCodec(SECRET).mint("bob")).user_id == "bob"

    def test_public_key_is_never_an_hmac_secret(self) -> None:
        _, pem = self._keys()
        # pyjwt refuses to sign like this, so forge by hand: HS256 keyed with the (public) PEM
        import hashlib
        import hmac

        signing_input = (
            f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': 'alice', 'exp': time.time() + 60})}"
        )
        mac = hmac.new(pem.encode(), signing_input.encode(), hashlib.sha256).digest()
        forged = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET, public_key=pem).verify(forged)

    def test_rs256_from_an_unknown_key_is_rejected(self) -> None:
        _, pem = self._keys()
        other, _ = self._keys()
        token = jwt.encode({"sub": "alice", "exp": int(time.time()) + 60}, other, algorithm="RS256")
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET, public_key=pem).verify(token)

    @pytest.mark.parametrize(
        ("extra", "ok"),
        [
            ({"aud": "mnemo", "iss": "https://idp.example"}, True),
            ({"aud": "other", "iss": "https://idp.example"}, False),
            ({"aud": "mnemo", "iss": "https://evil.example"}, False),
            ({"iss": "https://idp.example"}, False),
            ({"aud": "mnemo"}, False),
        ],
    )
    def test_audience_and_issuer(self, extra: dict[str, str], ok: bool) -> None:
        codec = TokenCodec(SECRET, audience="mnemo", issuer="https://idp.example")
        token = jwt.encode({"sub": "alice", "exp": int(time.time()) + 60, **extra}, SECRET, algorithm="HS256")
        if ok:
            assert codec.verify(token).user_id == "alice"
        else:
            with pytest.raises(Unauthorized):
                codec.verify(token)

    def test_minted_tokens_carry_audience_and_issuer(self) -> None:
        codec = TokenCodec(SECRET, audience="mnemo", issuer="https://idp.example")
        assert codec.verify(codec.mint("alice")).user_id == "alice"

    def test_small_clock_skew_is_tolerated(self) -> None:
        just_expired = jwt.encode({"sub": "alice", "exp": int(time.time()) - 10}, SECRET, algorithm="HS256")
        assert TokenCodec(SECRET).verify(just_expired).user_id == "alice"
        long_expired = jwt.encode({"sub": "alice", "exp": int(time.time()) - 120}, SECRET, algorithm="HS256")
        with pytest.raises(Unauthorized):
            TokenCodec(SECRET).verify(long_expired)
