/// `/-/ready` (SPEC §9): the configuration is loaded and, for each route that sends a token, a token can be had
/// now — from the cache, or from the provider (single-flight and throttled like any other request, so a probe
/// never hammers it). 503 with the reasons otherwise.
enum Readiness {
    static func check(_ account: any AccountView) async -> LocalResponse {
        var problems: [[String: String]] = []
        for scopes in account.scopeSets {
            do {
                _ = try await account.tokens.accessToken(for: scopes)
            } catch {
                problems.append(["scopes": scopes.description, "reason": "\(error)"])
            }
        }
        guard problems.isEmpty else {
            var response = LocalResponse.json(
                ["status": "not ready", "problems": problems], status: .serviceUnavailable)
            response.headers.add(name: "retry-after", value: "5")
            return response
        }
        return .json(["status": "ready", "flow": account.configuration.account.flow.rawValue])
    }
}
