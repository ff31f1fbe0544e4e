@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

extension ProxyServer {
    /// The port of the proxy's first TCP listener: every test proxy but the Unix-socket ones has one. 0 (where no
    /// connection succeeds) if it has none, so a test that expects one fails at its first request.
    var port: Int { localAddress?.port ?? 0 }
}
