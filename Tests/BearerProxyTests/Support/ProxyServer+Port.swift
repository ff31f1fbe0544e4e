import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens

@testable import BearerDataPlane

extension ProxyServer {
    /// The port of the proxy's first TCP listener: every test proxy but the Unix-socket ones has one. 0 (where no
    /// connection succeeds) if it has none, so a test that expects one fails at its first request.
    var port: Int { localAddress?.port ?? 0 }
}
