/// A flow's validated settings; each case carries exactly what its flow needs (SPEC §6.2).
public enum AccountSettings: Sendable, Hashable {
    case dev
    case native(NativeAccount)
    case deviceCode(OAuthClient)
    case browser(BrowserAccount)
    case clientCredentials(ClientCredentialsAccount)
    case refreshToken(RefreshTokenAccount)
    case command(CommandAccount)
    case staticToken(StaticTokenAccount)
    case firebase(FirebaseAccount)

    public var flow: AccountFlow {
        switch self {
        case .dev: .dev
        case .native: .native
        case .deviceCode: .deviceCode
        case .browser: .browser
        case .clientCredentials: .clientCredentials
        case .refreshToken: .refreshToken
        case .command: .command
        case .staticToken: .staticToken
        case .firebase: .firebase
        }
    }
}
