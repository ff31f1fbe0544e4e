import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// The scopes a discovered route's sign-in needs after its upstream's `403` with `error="insufficient_scope"`
/// (RFC 6750 §3.1; the MCP authorization specification's step-up): what the route's token was granted and what the
/// challenge's `scope` asks for, together — a sign-in for the challenge's alone would lose what the route already
/// uses (SPEC §6.3).
package enum StepUpScopes {
    /// The union, sorted, or nil — the `403` then passes through as it is — when the `403` is not an
    /// `insufficient_scope` challenge naming a scope. Only scope tokens (RFC 6749 §3.3 `NQCHAR`) without a quote or
    /// backslash are kept: the scopes come from the upstream and end up in a command a person pastes into a shell.
    static func requested(by headers: HTTPHeaders, granted: Set<String>) -> [String]? {
        guard let challenge = BearerChallenge.all(in: headers).first(where: { $0.error == "insufficient_scope" })
        else { return nil }
        let asked = (challenge.scope ?? "").split(separator: " ").map(String.init).filter(isShellSafeScope)
        guard !asked.isEmpty else { return nil }
        // The discovered routes' reserved cache key is no scope of the server's.
        let current = granted.subtracting(RouteAuth.discoveredTokenKey.scopes).filter(isShellSafeScope)
        return Set(asked).union(current).sorted()
    }

    /// `1*NQCHAR` (RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`) without `'`: safe between single quotes.
    private static func isShellSafeScope(_ scope: String) -> Bool {
        !scope.isEmpty
            && scope.utf8.allSatisfy { byte in
                byte >= 0x21 && byte <= 0x7E && byte != 0x22 && byte != 0x5C && byte != 0x27
            }
    }
}
