import Crypto

extension FakeIdentityProvider {
    /// A registered application. A client with no secret, certificate or federated credential is public: it must
    /// not authenticate (`invalid_client` 700025 if it does) and cannot use client credentials. A confidential
    /// client must authenticate on every grant, with its secret (in the body or by HTTP Basic) or a signed
    /// assertion — its own, or one an outside issuer signed (a federated credential).
    struct Client: Sendable {
        /// The application (client) id.
        var id: String
        /// The client secret, if it has one.
        var secret: String?
        /// The certificates whose keys may sign its client assertions.
        var certificates: [RegisteredCertificate]
        /// The outside issuers whose assertions it accepts (workload identity federation).
        var federatedCredentials: [FederatedCredential]
        /// The application permissions (`roles`) put in its client-credentials tokens.
        var roles: [String]
        /// Whether native authentication (`/initiate`, `/challenge`, the `password` and `oob` grants) is enabled
        /// for it; when not, `/initiate` answers `invalid_client` with suberror `nativeauthapi_disabled`.
        var nativeAuthEnabled: Bool

        /// `nativeAuthEnabled` nil: enabled for a public client, disabled for a confidential one.
        init(
            id: String, secret: String? = nil, certificates: [RegisteredCertificate] = [],
            federatedCredentials: [FederatedCredential] = [], roles: [String] = [], nativeAuthEnabled: Bool? = nil
        ) {
            self.id = id
            self.secret = secret
            self.certificates = certificates
            self.federatedCredentials = federatedCredentials
            self.roles = roles
            self.nativeAuthEnabled =
                nativeAuthEnabled ?? (secret == nil && certificates.isEmpty && federatedCredentials.isEmpty)
        }

        /// Whether it has a credential (and so must authenticate).
        var isConfidential: Bool {
            self.secret != nil || !self.certificates.isEmpty || !self.federatedCredentials.isEmpty
        }

        /// The default public client id (the `clientId` of user flows in tests).
        static let publicClientID = "00001111-aaaa-2222-bbbb-3333cccc4444"
        /// The default confidential client id.
        static let confidentialClientID = "00002222-bbbb-3333-cccc-4444dddd5555"
        /// The default confidential client's secret (test only).
        static let confidentialClientSecret = "fake~client~secret~0123456789"

        /// A public client with `publicClientID` (native authentication enabled).
        static var publicClient: Client {
            Client(id: Self.publicClientID)
        }

        /// A confidential client with `confidentialClientID`, `confidentialClientSecret` and the fixture
        /// certificate `CertificateFixtures.client`; roles `["Tasks.Read.All"]`; native authentication disabled.
        static var confidentialClient: Client {
            Client(
                id: Self.confidentialClientID, secret: Self.confidentialClientSecret,
                certificates: [CertificateFixtures.client.registration], roles: ["Tasks.Read.All"])
        }
    }
}

extension FakeIdentityProvider {
    /// A user whose refresh tokens the fake honours; the identity claims of their tokens; how they sign in
    /// interactively (native authentication, and as the browser user of the authorization endpoint). Requirements
    /// that stop a sign-in (MFA, registration, password reset) are knobs of the provider, not of the user.
    struct User: Sendable, Hashable {
        /// The object id (`oid`, and `uid` in `client_info`).
        var oid: String
        /// `name`.
        var name: String
        /// `preferred_username`.
        var preferredUsername: String
        /// `sub` (pairwise per application in Entra; fixed here).
        var sub: String
        /// The password native authentication's `password` grant checks (nil: none; such a user cannot sign in
        /// with a password).
        var password: String?
        /// How the user signs in through native authentication.
        var signInMethod: SignInMethod

        init(
            oid: String, name: String, preferredUsername: String, sub: String? = nil, password: String? = nil,
            signInMethod: SignInMethod = .password
        ) {
            self.oid = oid
            self.name = name
            self.preferredUsername = preferredUsername
            self.sub = sub ?? "sub-" + oid
            self.password = password
            self.signInMethod = signInMethod
        }

        /// Alice Contoso: signs in with `alicePassword`.
        static let alice = User(
            oid: "a11ce000-0000-4000-8000-00000000a11c", name: "Alice Contoso",
            preferredUsername: "alice@contoso.example", sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
            password: alicePassword, signInMethod: .password)
        /// Bob Contoso: signs in with an email one-time passcode (read it with `lastOneTimeCode(for:)`).
        static let bob = User(
            oid: "b0b00000-0000-4000-8000-000000000b0b", name: "Bob Contoso",
            preferredUsername: "bob@contoso.example", sub: "BBBBBBBBBBBBBBBBBBBBBIkzqFVrSaSaFHy782bbtaQ",
            signInMethod: .emailOneTimePasscode)
        /// Alice's password (test only).
        static let alicePassword = "correct horse battery staple"
    }
}

extension FakeIdentityProvider {
    /// How a user signs in through native authentication (`User.signInMethod`): which `challenge_type` the client
    /// must offer at `/initiate` and `/challenge` for the fake not to answer `redirect`.
    enum SignInMethod: String, Sendable, Hashable, CaseIterable {
        /// Email and password: needs `password` among the challenge types.
        case password
        /// Email one-time passcode (8 digits, "emailed"): needs `oob` among the challenge types.
        case emailOneTimePasscode

        /// The `challenge_type` value this method needs (`password` or `oob`).
        var challengeType: String {
            switch self {
            case .password: return "password"
            case .emailOneTimePasscode: return "oob"
            }
        }
    }
}

extension FakeIdentityProvider {
    /// Something that stops a user's native-authentication sign-in after the credential checked out, set per user
    /// with `setMFARequired(_:for:)`, `setRegistrationRequired(_:for:)` and `setPasswordResetRequired(_:for:)`.
    /// Checked in this order (`passwordReset` only for the `password` grant).
    enum SignInRequirement: Sendable, Hashable, CaseIterable {
        /// The password must be reset: `invalid_request` 50142.
        case passwordReset
        /// A second factor is needed: `invalid_grant` 50076, suberror `mfa_required`, a new `continuation_token`.
        case mfa
        /// A strong authentication method must be registered first: `invalid_grant` 50079, suberror
        /// `registration_required`, a new `continuation_token`.
        case registration
    }
}

extension FakeIdentityProvider {
    /// A certificate registered on a client, as Entra keeps it: the public key and the thumbprints a client
    /// assertion's header names it by (`x5t#S256` = base64url SHA-256 of the DER, `x5t` = base64url SHA-1).
    struct RegisteredCertificate: Sendable, Equatable {
        /// The public key, PEM (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo).
        var publicKeyPEM: String
        /// base64url(SHA-256(certificate DER)), unpadded.
        var sha256Thumbprint: String
        /// base64url(SHA-1(certificate DER)), unpadded.
        var sha1Thumbprint: String

        init(publicKeyPEM: String, sha256Thumbprint: String, sha1Thumbprint: String) {
            self.publicKeyPEM = publicKeyPEM
            self.sha256Thumbprint = sha256Thumbprint
            self.sha1Thumbprint = sha1Thumbprint
        }

        /// Computes both thumbprints from the certificate's DER.
        init(publicKeyPEM: String, certificateDER: [UInt8]) {
            self.init(
                publicKeyPEM: publicKeyPEM,
                sha256Thumbprint: FakeIdentityJWT.base64URL(SHA256.hash(data: certificateDER)),
                sha1Thumbprint: FakeIdentityJWT.base64URL(Insecure.SHA1.hash(data: certificateDER)))
        }
    }
}

extension FakeIdentityProvider {
    /// A misbehaviour to inject into token requests: queued one-shot with `enqueue(_:times:forScope:)`, or
    /// persistent with `setPersistentFailure(_:forScope:)`; into the interactive endpoints (`/initiate`,
    /// `/challenge`, `/devicecode`, `/authorize`, `/oidc/revoke`) with `enqueue(_:times:at:)`. Requests still get
    /// recorded.
    enum Failure: Sendable {
        /// Answer with an Entra error (status default: 400, or 401 for `invalid_client`). `description` replaces
        /// the text after `AADSTSnnnn: `; `claims` sets the error's `claims` member.
        case error(
            status: Int? = nil, error: String, codes: [Int], description: String? = nil, suberror: String? = nil,
            claims: String? = nil)
        /// `429 Too Many Requests` with `Retry-After: retryAfter` and an Entra error body
        /// (`temporarily_unavailable`, AADSTS90055).
        case throttle(retryAfter: Int)
        /// `503` `temporarily_unavailable` (AADSTS90033), no `Retry-After`.
        case unavailable
        /// `503` `temporarily_unavailable` with `Retry-After: retryAfter`.
        case unavailableRetryAfter(Int)
        /// Answer with exactly this (e.g. a 200 whose body is not JSON).
        case raw(status: Int, headers: [(String, String)] = [], body: String)

        /// `invalid_grant` 700082 with suberror `bad_token`: the refresh token expired (full sign-in needed).
        static let refreshTokenExpired = Failure.error(error: "invalid_grant", codes: [700082], suberror: "bad_token")
        /// `invalid_grant` 65001 with suberror `consent_required`.
        static let consentRequired = Failure.error(error: "invalid_grant", codes: [65001], suberror: "consent_required")

        /// A short label for records (`RecordedTokenRequest.injected`).
        var label: String {
            switch self {
            case .error(let status, let error, let codes, _, let suberror, _):
                let status = status.map { " \($0)" } ?? ""
                let suberror = suberror.map { "/\($0)" } ?? ""
                return "error\(status) \(error)\(suberror) \(codes)"
            case .throttle(let retryAfter): return "throttle(retryAfter: \(retryAfter))"
            case .unavailable: return "unavailable"
            case .unavailableRetryAfter(let retryAfter): return "unavailable(retryAfter: \(retryAfter))"
            case .raw(let status, _, _): return "raw(\(status))"
            }
        }

        /// The Entra error this failure answers with, if it is one.
        var entraError: FakeIdentityError? {
            switch self {
            case .error(let status, let error, let codes, let description, let suberror, let claims):
                return FakeIdentityError(
                    status: status, error: error, codes: codes, message: description, suberror: suberror,
                    claims: claims)
            case .throttle(let retryAfter):
                return FakeIdentityError(
                    status: 429, error: "temporarily_unavailable", codes: [90055], retryAfter: retryAfter)
            case .unavailable:
                return FakeIdentityError(status: 503, error: "temporarily_unavailable", codes: [90033])
            case .unavailableRetryAfter(let retryAfter):
                return FakeIdentityError(
                    status: 503, error: "temporarily_unavailable", codes: [90033], retryAfter: retryAfter)
            case .raw:
                return nil
            }
        }
    }
}
