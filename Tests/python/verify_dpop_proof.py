#!/usr/bin/env python3
"""Verifies DPoP proofs (RFC 9449 §4.3) with PyJWT, a JOSE implementation independent of the proxy's.

Reads one JSON object a line on stdin: {"proof": ..., "htm": ..., "htu": ..., "algorithms": [...]}. For each,
prints one JSON line: {"ok": true, "alg": ..., "jkt": ...} with the RFC 7638 thumbprint of the header's key, or
{"ok": false, "error": ...}. Exits 0 when every proof verified, 1 otherwise.
"""

import base64
import hashlib
import json
import sys
import time

import jwt

# RFC 7638 §3.2: the required members of each key type.
REQUIRED = {"EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x")}


def thumbprint(jwk):
    members = {name: jwk[name] for name in REQUIRED[jwk["kty"]]}
    canonical = json.dumps(members, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def verify(request):
    proof = request["proof"]
    header = jwt.get_unverified_header(proof)
    if header.get("typ") != "dpop+jwt":
        raise ValueError("typ is not dpop+jwt")
    alg = header.get("alg")
    if alg not in request["algorithms"]:
        raise ValueError(f"alg {alg} not accepted")
    jwk = header["jwk"]
    if "d" in jwk:
        raise ValueError("the jwk holds a private key")
    key = jwt.PyJWK(jwk, algorithm=alg)
    claims = jwt.decode(proof, key=key.key, algorithms=[alg], options={"verify_aud": False})
    if claims.get("htm") != request["htm"] or claims.get("htu") != request["htu"]:
        raise ValueError("htm or htu is not the request's")
    if abs(claims["iat"] - time.time()) > 60 or not claims.get("jti"):
        raise ValueError("iat or jti")
    return {"ok": True, "alg": alg, "jkt": thumbprint(jwk)}


def main():
    failed = False
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = verify(json.loads(line))
        except Exception as error:  # every refusal is reported, never raised
            failed = True
            result = {"ok": False, "error": str(error)}
        print(json.dumps(result))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
