// An on-behalf-of route's `scopes` and `onBehalfOf` object.

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// `"auth": "on-behalf-of"`: the account must be a confidential client (`client-credentials`: the exchange
    /// authenticates the proxy as the client the caller's token was issued to); `onBehalfOf` is optional, every key
    /// of it optional, and the keys of RFC 8693 apply to `token-exchange` only.
    func readOnBehalfOf(_ route: ObjectReader, flow: AccountFlow?) -> OnBehalfOfSettings? {
        var valid = true
        if route.contains("token") {
            route.report("token", "not used with \"auth\": \"on-behalf-of\" (the exchange issues the token)")
            valid = false
        }
        if let flow, flow != .clientCredentials {
            route.report(
                "auth",
                "\"on-behalf-of\" needs the \"client-credentials\" flow: exchanging a caller's token authenticates the "
                    + "proxy as a confidential client (the account's flow is \"\(flow.rawValue)\")")
            valid = false
        }
        let object: ObjectReader?
        if route.contains("onBehalfOf") {
            object = route.object("onBehalfOf")
            if object == nil { valid = false }
        } else {
            object = nil
        }
        object?.rejectUnknownKeys(allowed: ConfigurationKeys.onBehalfOf)
        let grant: OnBehalfOfSettings.Grant? =
            object?.contains("grant") == true ? object?.choice("grant") : .jwtBearer
        let scopes = readScopes(route, "scopes", rejectOpenIDConnect: true)
        if route.contains("scopes"), scopes == nil { valid = false }
        var settings = OnBehalfOfSettings(grant: grant ?? .jwtBearer, scopes: scopes ?? ScopeSet([]))
        switch grant {
        case .jwtBearer?:
            if !route.contains("scopes") {
                route.report(
                    "scopes",
                    "is required with the \"jwt-bearer\" grant: the scopes of the downstream API, e.g. "
                        + "[\"api://downstream/.default\"]")
                valid = false
            }
            if let object {
                for key in [
                    "audience", "resource", "subjectTokenType", "requestedTokenType", "actorToken",
                    "actorTokenType",
                ] where object.contains(key) {
                    object.report(key, "only used with \"grant\": \"token-exchange\" (RFC 8693)")
                    valid = false
                }
            }
        case .tokenExchange?:
            guard let object else { break }
            settings.audience = optionalText(object, "audience", &valid)
            settings.resource = optionalURI(object, "resource", &valid)
            settings.subjectTokenType = optionalURI(object, "subjectTokenType", &valid) ?? settings.subjectTokenType
            settings.requestedTokenType = optionalURI(object, "requestedTokenType", &valid)
            if object.contains("actorToken") {
                settings.actorToken = readClientAssertion(object, key: "actorToken")
                if settings.actorToken == nil { valid = false }
            }
            if object.contains("actorTokenType"), !object.contains("actorToken") {
                object.report("actorTokenType", "needs \"actorToken\"")
                valid = false
            }
            settings.actorTokenType = optionalURI(object, "actorTokenType", &valid) ?? settings.actorTokenType
        case nil:
            valid = false
        }
        if let object, object.contains("maxSubjects") {
            if let maximum = object.integer("maxSubjects", in: 1...OnBehalfOfSettings.maximumSubjectsLimit) {
                settings.maximumSubjects = maximum
            } else {
                valid = false
            }
        }
        return valid ? settings : nil
    }

    /// A non-empty string without control characters or spaces at its edges, or nil when absent.
    private func optionalText(_ object: ObjectReader, _ key: String, _ valid: inout Bool) -> String? {
        guard object.contains(key) else { return nil }
        guard let text = object.nonEmptyString(key) else {
            valid = false
            return nil
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            text.first != " ", text.last != " "
        else {
            object.report(key, "may not contain control characters or start or end with a space")
            valid = false
            return nil
        }
        return text
    }

    /// An absolute URI (RFC 3986 §4.3: a scheme, `:`, no spaces), or nil when absent: RFC 8693's token types and its
    /// `resource`.
    private func optionalURI(_ object: ObjectReader, _ key: String, _ valid: inout Bool) -> String? {
        guard let text = optionalText(object, key, &valid) else { return nil }
        guard Self.isAbsoluteURI(text) else {
            object.report(
                key, "must be an absolute URI, e.g. \"urn:ietf:params:oauth:token-type:access_token\" (RFC 8693 §3)")
            valid = false
            return nil
        }
        return text
    }

    static func isAbsoluteURI(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon < bytes.count - 1,
            URICharacters.isAlpha(bytes[0]), !bytes.contains(UInt8(ascii: " "))
        else { return false }
        // RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
        return bytes[..<colon].allSatisfy { byte in
            URICharacters.isAlpha(byte) || URICharacters.isDigit(byte) || "+-.".utf8.contains(byte)
        }
    }
}
