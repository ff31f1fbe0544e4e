import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token cache file's format: one JSON object, `"version"` first, then the fields of ``PersistedAccount`` (whose
/// coding keys are this format's keys), sorted.
///
/// ```json
/// {
///   "version" : 1,
///   "accessTokens" : [
///     {
///       "claimsHash" : "…",
///       "expiresOn" : "2025-11-22T06:40:00.123Z",
///       "grantedScopes" : [ "api://todo/ToDoList.Read", "api://todo/ToDoList.ReadWrite" ],
///       "refreshOn" : "2025-11-22T06:10:00.123Z",
///       "scopes" : [ "api://todo/ToDoList.Read" ],
///       "value" : "<secret>"
///     }
///   ],
///   "flow" : "refresh-token",
///   "identity" : { "name" : "Ada Lovelace", "objectID" : "…", "tenantID" : "…", "username" : "ada@contoso.com" },
///   "refreshToken" : "<secret>",
///   "updatedAt" : "2025-11-22T05:40:00.123Z"
/// }
/// ```
///
/// Absent optionals are omitted. Keys this version does not know are ignored when reading; a change that an older
/// build must not silently drop on its next rewrite gets a new `version`, which older builds set aside instead.
enum TokenFile {
    /// The version this build writes and the newest it reads.
    static let currentVersion = 1

    /// `account` as it reads back from the file: dates rounded to the millisecond, scope lists sorted.
    static func normalized(_ account: PersistedAccount) -> PersistedAccount {
        var account = account
        account.updatedAt = TokenFileDate.quantized(account.updatedAt)
        for index in account.accessTokens.indices {
            account.accessTokens[index].scopes.sort()
            account.accessTokens[index].grantedScopes.sort()
            account.accessTokens[index].expiresOn = TokenFileDate.quantized(account.accessTokens[index].expiresOn)
            account.accessTokens[index].refreshOn = TokenFileDate.quantized(account.accessTokens[index].refreshOn)
        }
        return account
    }

    /// What the bytes of a token cache file hold.
    enum Contents: Equatable {
        case account(PersistedAccount)
        /// Unusable; `reason` says why in words that never quote the file's contents (they may hold secrets).
        case unusable(reason: String)
    }

    /// The account `data` holds, or why it holds none.
    package static func decode(_ data: Data) -> Contents {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            guard let date = TokenFileDate.date(from: try container.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date")
            }
            return date
        }
        // The version is checked on its own first, so that a newer file is reported as newer rather than as
        // whatever shape error its new fields would cause.
        let version: Int
        do {
            version = try decoder.decode(VersionProbe.self, from: data).version
        } catch {
            return .unusable(reason: describeVersionFailure(error))
        }
        guard version == currentVersion else {
            return .unusable(
                reason: version > currentVersion
                    ? "written by a newer bearer-proxy (version \(version))" : "unknown format version \(version)")
        }
        do {
            // PersistedAccount's keys are the file's keys; its decoder ignores "version".
            return .account(normalized(try decoder.decode(PersistedAccount.self, from: data)))
        } catch {
            return .unusable(reason: describeShapeFailure(error))
        }
    }

    /// The bytes to write for `account`: pretty-printed (the file is small and people do look at it), keys sorted
    /// (the same account always gives the same bytes), and `version` spliced in as the first key — JSONEncoder
    /// does not keep keys in the order they are encoded, so sorting is the only order it offers.
    package static func encode(_ account: PersistedAccount) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(TokenFileDate.string(from: date))
        }
        let body = try encoder.encode(account)
        // Every account has keys (`flow`, `accessTokens`, `updatedAt`), so the object continues after the splice.
        guard body.first == UInt8(ascii: "{") else {
            throw EncodingError.invalidValue(account, .init(codingPath: [], debugDescription: "not a JSON object"))
        }
        return Data("{\n  \"version\" : \(currentVersion),".utf8) + body.dropFirst()
    }

    private struct VersionProbe: Decodable {
        var version: Int
    }

    private static func describeVersionFailure(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "unreadable" }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "not valid JSON"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty: return "not a JSON object"
        case .keyNotFound: return "no \"version\" field: not a bearer-proxy token cache"
        default: return "\"version\" is not a whole number"
        }
    }

    private static func describeShapeFailure(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "unreadable" }
        // Only the coding path (keys and indices) is quoted: DecodingError's debug descriptions can echo values.
        switch error {
        case .keyNotFound(let key, let context):
            return "wrong shape: \"\(key.stringValue)\" missing at \(path(context.codingPath))"
        case .valueNotFound(_, let context): return "wrong shape: null at \(path(context.codingPath))"
        case .typeMismatch(_, let context): return "wrong shape: unexpected type at \(path(context.codingPath))"
        case .dataCorrupted(let context): return "wrong shape: invalid value at \(path(context.codingPath))"
        @unknown default: return "wrong shape"
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = "$"
        for key in codingPath {
            if let index = key.intValue { text += "[\(index)]" } else { text += "." + key.stringValue }
        }
        return text
    }
}
