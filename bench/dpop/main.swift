// bench-dpop: how many DPoP proofs (RFC 9449) one core signs a second — the data plane's proof for a request as it
// makes it (`DPoPKey.proof`: claims, base64url, one signature), for both key algorithms the proxy uses (ES256, and
// EdDSA where the server offers it), and the bare signatures they are made of. Single-threaded: one core.
//
//     swift build -c release --product bench-dpop && .build/release/bench-dpop [seconds-per-row]

import BearerTokens
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs `body` for about `seconds`, in batches of 100, and returns how many runs a second it made.
func rate(seconds: Double, _ body: () -> Int) -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    var runs = 0
    var sink = 0
    while clock.now - start < .seconds(seconds) {
        for _ in 0..<100 { sink &+= body() }
        runs += 100
    }
    let elapsed = clock.now - start
    if sink == 42 { print("") }  // keeps the work from being optimised away
    return Double(runs) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 3
let es256Key = DPoPKey(algorithm: .es256)
let edDSAKey = DPoPKey(algorithm: .edDSA)
let token = String(repeating: "t", count: 1_024)
let accessTokenHash = DPoPKey.accessTokenHash(token)
let htu = "https://api.example.com/v1/orders/12345"
let p256 = P256.Signing.PrivateKey()
let ed25519 = Curve25519.Signing.PrivateKey()
let input = [UInt8](repeating: 0x61, count: 420)  // a proof's signing input: header and claims, base64url

let rows: [(String, () -> Int)] = [
    (
        "DPoPKey.proof (ES256, as each forwarded request makes it)",
        {
            es256Key.proof(
                method: "GET", htu: htu, iat: 1_700_000_000, accessTokenHash: accessTokenHash, nonce: "nonce-1"
            ).count
        }
    ),
    (
        "DPoPKey.proof (EdDSA, as each forwarded request makes it)",
        {
            edDSAKey.proof(
                method: "GET", htu: htu, iat: 1_700_000_000, accessTokenHash: accessTokenHash, nonce: "nonce-1"
            ).count
        }
    ),
    ("P-256 ECDSA signature alone (420 bytes)", { (try? p256.signature(for: input))?.rawRepresentation.count ?? 0 }),
    ("Ed25519 signature alone (420 bytes)", { (try? ed25519.signature(for: input))?.count ?? 0 }),
    ("SHA-256 of a 1 KiB token (ath, once per token)", { DPoPKey.accessTokenHash(token).utf8.count }),
]
print("| what | per second, one core | µs each |")
print("|---|---:|---:|")
for (name, body) in rows {
    let perSecond = rate(seconds: seconds, body)
    let micros = (1e7 / perSecond).rounded() / 10
    print("| \(name) | \(Int(perSecond)) | \(micros) |")
}
