/// The OpenID Connect `prompt` values Microsoft accepts for interactive sign-in.
public enum SignInPrompt: String, Sendable, Hashable, CaseIterable {
    case login
    case none
    case consent
    case selectAccount = "select_account"
    case create
}
