extension FakeIdentityProvider {
    /// A registered application. A client with neither secret nor certificate is public: it must not authenticate
    /// (`invalid_client` 700025 if it does) and cannot use client credentials. A confidential client must
    /// authenticate on every grant, with its secret (in the body or by HTTP Basic) or a signed assertion.
    struct Client: Sendable {
        /// The application (client) id.
        var id: String
        /// The client secret, if it has one.
        var secret: String?
        /// The certificates whose keys may sign its client assertions.
        var certificates: [RegisteredCertificate]
        /// The application permissions (`roles`) put in its client-credentials tokens.
        var roles: [String]
        /// Whether native authentication (`/initiate`, `/challenge`, the `password` and `oob` grants) is enabled
        /// for it; when not, `/initiate` answers `invalid_client` with suberror `nativeauthapi_disabled`.
        var nativeAuthEnabled: Bool

        /// `nativeAuthEnabled` nil: enabled for a public client, disabled for a confidential one.
        init(
            id: String, secret: String? = nil, certificates: [RegisteredCertificate] = [], roles: [String] = [],
            nativeAuthEnabled: Bool? = nil
        ) {
            self.id = id
            self.secret = secret
            self.certificates = certificates
            self.roles = roles
            self.nativeAuthEnabled = nativeAuthEnabled ?? (secret == nil && certificates.isEmpty)
        }

        /// Whether it has a credential (and so must authenticate).
        var isConfidential: Bool {
            self.secret != nil || !self.certificates.isEmpty
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
