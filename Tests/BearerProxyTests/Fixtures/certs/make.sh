#!/usr/bin/env bash
# Regenerates the client-certificate fixtures used by the bearer-proxy tests.
#
# TEST-ONLY KEYS. These private keys are committed on purpose so the tests can sign OAuth client
# assertions (RFC 7523, Microsoft "certificate credentials") and have FakeIdentityProvider verify them.
# They protect nothing and must never be used outside the test suite.
#
# Output (in this directory), for NAME in client, other:
#   NAME.pem         self-signed certificate (RSA 2048, SHA-256, valid 100 years)
#   NAME-key.pem     its private key (PKCS#8, unencrypted)
#   NAME-public.pem  its public key (SubjectPublicKeyInfo PEM), what the fake registers
#
# "client" (CN=bearer-proxy-test-client) is the certificate registered with the fake; "other"
# (CN=bearer-proxy-test-other) is unrelated, for wrong-key and wrong-thumbprint tests.
# Thumbprints (x5t, x5t#S256) are computed by the tests from the DER, so nothing else needs updating.
set -euo pipefail
cd "$(dirname "$0")"

days=36500

make_pair() {
    local name=$1 cn=$2
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name-key.pem" 2>/dev/null
    chmod 644 "$name-key.pem"
    openssl req -x509 -new -key "$name-key.pem" -sha256 -days "$days" \
        -subj "/CN=$cn" \
        -addext "basicConstraints=critical,CA:FALSE" \
        -addext "keyUsage=critical,digitalSignature" \
        -addext "subjectKeyIdentifier=hash" \
        -out "$name.pem"
    openssl pkey -in "$name-key.pem" -pubout -out "$name-public.pem"
    # Sanity: the key and the certificate belong together.
    test "$(openssl x509 -in "$name.pem" -noout -pubkey)" = "$(cat "$name-public.pem")"
}

make_pair client bearer-proxy-test-client
make_pair other bearer-proxy-test-other

for name in client other; do
    printf '%s x5t#S256=%s\n' "$name" \
        "$(openssl x509 -in "$name.pem" -outform DER | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')"
done
