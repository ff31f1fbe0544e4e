import Foundation

/// The `claims` parameter of a token request (OpenID Connect Core §5.5): the resource server's challenge merged
/// with the client's declared capabilities (`xms_cc`, e.g. `cp1` for continuous access evaluation — protocols.md
/// §9), as MSAL merges them.
enum ClaimsRequest {
    static func merged(challenge: String?, capabilities: [String]) -> String? {
        var root = challenge.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        if challenge != nil && root.isEmpty, let challenge { return challenge }  // not JSON: pass as received
        if !capabilities.isEmpty {
            var accessToken = root["access_token"] as? [String: Any] ?? [:]
            accessToken["xms_cc"] = ["values": capabilities]
            root["access_token"] = accessToken
        }
        guard !root.isEmpty,
            let data = try? JSONSerialization.data(
                withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
