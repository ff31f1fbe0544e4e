/// Where the Firebase Auth REST API lives: Google's hosts, or the Auth emulator, which serves the same paths
/// prefixed with the real host name (`http://127.0.0.1:9099/identitytoolkit.googleapis.com/v1/…`), or the same
/// layout under `apiBaseURL`.
struct FirebaseEndpoints: Sendable, Equatable {
    let identityToolkit: String
    let secureToken: String

    init(emulator: ListenAddress?, base apiBaseURL: String? = nil) {
        let base = emulator.map { "http://\($0)/" } ?? apiBaseURL.map { $0 + "/" } ?? "https://"
        identityToolkit = base + "identitytoolkit.googleapis.com/v1/accounts:"
        secureToken = base + "securetoken.googleapis.com/v1/token"
    }

    /// `accounts:createAuthUri`, `accounts:signInWithIdp`, `accounts:signInWithPassword`.
    func accounts(_ method: String) -> String { identityToolkit + method }
}
