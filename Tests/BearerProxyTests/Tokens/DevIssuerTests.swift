import Crypto
import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("Dev issuer: ES256 tokens a local API can validate")
struct DevIssuerTests {
    let issuer = DevIssuer(
        issuer: "http://127.0.0.1:8080/-", key: P256.Signing.PrivateKey(),
        now: { Date(timeIntervalSince1970: 1_800_000_000) })

    private func decode(_ segment: Substring) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(segment))
        let object = try JSONSerialization.jsonObject(with: data)
        return try #require(object as? [String: Any])
    }

    @Test("claims: iss, sub, aud from the scopes' resource, scp, iat/nbf/exp, jti")
    func claims() throws {
        let token = issuer.mint(for: ScopeSet(["api://todo/ToDoList.Read", "api://todo/ToDoList.ReadWrite"]))
        let parts = token.value.split(separator: ".")
        #expect(parts.count == 3)
        let header = try decode(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == issuer.keyID)
        let claims = try decode(parts[1])
        #expect(claims["iss"] as? String == "http://127.0.0.1:8080/-")
        #expect(claims["aud"] as? String == "api://todo")
        #expect(claims["scp"] as? String == "ToDoList.Read ToDoList.ReadWrite")
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims["exp"] as? Int == 1_800_003_600)
        #expect((claims["jti"] as? String)?.isEmpty == false)
        #expect(claims["sub"] as? String == issuer.identity.subject)
        #expect(token.expiresOn == Date(timeIntervalSince1970: 1_800_003_600))
    }

    @Test("bare scopes get the default resource as audience")
    func bareScopes() throws {
        let token = issuer.mint(for: ScopeSet(["User.Read"]))
        let claims = try decode(token.value.split(separator: ".")[1])
        #expect(claims["aud"] as? String == ScopeSet.defaultResource)
    }

    @Test("the signature verifies with the key published in the JWKS")
    func signatureVerifies() throws {
        let token = issuer.mint(for: ScopeSet(["api://a/R"]))
        let parts = token.value.split(separator: ".")
        let jwksObject = try JSONSerialization.jsonObject(with: issuer.jwksDocument)
        let jwks = try #require(jwksObject as? [String: Any])
        let key = try #require((jwks["keys"] as? [[String: Any]])?.first)
        #expect(key["kid"] as? String == issuer.keyID)
        let xText = try #require(key["x"] as? String)
        let yText = try #require(key["y"] as? String)
        let x = try #require(Base64URL.decode(xText))
        let y = try #require(Base64URL.decode(yText))
        let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        let rawSignature = try #require(Base64URL.decode(parts[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: rawSignature)
        #expect(publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test("the discovery document's issuer equals the tokens' iss and points at the JWKS")
    func discovery() throws {
        let object = try JSONSerialization.jsonObject(with: issuer.discoveryDocument)
        let document = try #require(object as? [String: Any])
        #expect(document["issuer"] as? String == issuer.issuer)
        #expect(document["jwks_uri"] as? String == "http://127.0.0.1:8080/-/jwks.json")
    }

    @Test("the signing key is created once, kept 0600 in a 0700 directory, and reused")
    func keyPersistence() throws {
        let parent = NSTemporaryDirectory() + "bp-key-\(UUID().uuidString)"
        let directory = StateDirectory(path: parent + "/state")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let first = try DevIssuer.signingKey(in: directory)
        let second = try DevIssuer.signingKey(in: directory)
        #expect(first.rawRepresentation == second.rawRepresentation)
        let file = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + DevIssuer.keyFileName)
        #expect((file[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
    }

    @Test("a corrupt key file is reported with its path, not silently replaced")
    func corruptKey() throws {
        let directory = StateDirectory(path: NSTemporaryDirectory() + "bp-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.write(Data("not a key".utf8), to: DevIssuer.keyFileName)
        #expect {
            _ = try DevIssuer.signingKey(in: directory)
        } throws: { error in
            "\(error)".contains(DevIssuer.keyFileName) && "\(error)".contains("delete it")
        }
    }
}
