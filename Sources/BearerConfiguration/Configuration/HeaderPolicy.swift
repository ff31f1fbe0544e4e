import BearerCodec
import BearerHTTP
import BearerJSON
import NIOHTTP1

/// Every header field the proxy treats in a way of its own, and how, in one table (SPEC §8).
///
/// There used to be four lists — the hop-by-hop names, the names a `Connection` option may not name, the names
/// spelled with `_` that are refused, and the names `Forwarding` drops — and a rule added to one could be missed in
/// another. Now each field has one row, and every check reads its rules from it: ``RequestGuard`` (the `Connection`
/// options, the `_` spellings, the fields decided once), ``Forwarding`` and ``WebSocketUpgrade`` (what is dropped on
/// the way up and back), ``MethodOverride`` (which fields ask for another method). `HeaderPolicyTests` walks the
/// table and checks each rule where it applies.
@usableFromInline
package enum HeaderPolicy {
    /// What the proxy does with a field.
    @usableFromInline
    package struct Rules: OptionSet, Sendable, CustomStringConvertible {
        @usableFromInline
        package let rawValue: UInt16

        // Written out: an inlinable type's witnesses must be usable from inlinable code.
        @usableFromInline
        package init(rawValue: UInt16) {
            self.rawValue = rawValue
        }

        /// Describes one connection, not the message: never forwarded, either way (RFC 9110 §7.6.1).
        package static let hopByHop = Rules(rawValue: 1 << 0)
        /// The proxy writes the upstream request's own value, or none: the client's is never copied (SPEC §8).
        static let setByProxy = Rules(rawValue: 1 << 1)
        /// Dropped from the client's request: spoofable (`Forwarded`), or meant for the proxy alone (its key).
        static let droppedFromRequest = Rules(rawValue: 1 << 2)
        /// Dropped from the upstream's response: the proxy writes its own.
        static let droppedFromResponse = Rules(rawValue: 1 << 3)
        /// A client's `Connection` may not name it (400): honouring that would remove the field the proxy checked
        /// or wrote, after it checked or wrote it (RFC 9110 §7.6.1 lets a client name any field).
        package static let refusedInConnection = Rules(rawValue: 1 << 4)
        /// A client field that spells it with `_` for `-` is refused (400): a backend that folds `_` into `-` (CGI,
        /// WSGI) would read it as this field (oauth2-proxy CVE-2025-64484).
        package static let refusedWithUnderscore = Rules(rawValue: 1 << 5)
        /// The guard decides on it, so it must come once (400 when repeated): "the last one wins" and "the first
        /// one wins" are both someone's reading.
        static let decidedOnce = Rules(rawValue: 1 << 6)
        /// Asks for another method (`X-HTTP-Method-Override` and kin): held to the route's `methods`.
        package static let methodOverride = Rules(rawValue: 1 << 7)

        /// Not copied from the client's request to the upstream's.
        package static let notForwardedUp: Rules = [.hopByHop, .setByProxy, .droppedFromRequest]
        /// Not copied from the upstream's response to the client's.
        package static let notForwardedDown: Rules = [.hopByHop, .droppedFromResponse]

        @usableFromInline
        package var description: String {
            let names: [(Rules, String)] = [
                (.hopByHop, "hop-by-hop"), (.setByProxy, "set by the proxy"),
                (.droppedFromRequest, "dropped from requests"), (.droppedFromResponse, "dropped from responses"),
                (.refusedInConnection, "refused in Connection"), (.refusedWithUnderscore, "refused with _"),
                (.decidedOnce, "decided once"), (.methodOverride, "method override"),
            ]
            return names.filter { contains($0.0) }.map(\.1).joined(separator: ", ")
        }
    }

    /// A field (lowercase name) and its rules.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline
        package let name: StaticString
        @usableFromInline
        package let rules: Rules

        init(_ name: StaticString, _ rules: Rules) {
            self.name = name
            self.rules = rules
        }
    }

    /// The table. Every row is also refused with `_`: a field the proxy treats specially must not have a second
    /// spelling that it does not.
    static let entries: [Entry] = [
        // RFC 9110 §7.6.1 (Connection), RFC 9112 §6.1 (Transfer-Encoding), RFC 9110 §10.1.4 (TE), RFC 2068 §19.7.1
        // (Keep-Alive), RFC 9110 §11.7.1–2 (Proxy-Authenticate, Proxy-Authorization), §7.8 (Upgrade), §6.6.2
        // (Trailer), and the non-standard Proxy-Connection: Go's httputil.ReverseProxy list "as of RFC 7230".
        Entry("connection", [.hopByHop, .refusedWithUnderscore]),
        Entry("keep-alive", [.hopByHop, .refusedWithUnderscore]),
        Entry("proxy-connection", [.hopByHop, .refusedWithUnderscore]),
        Entry("proxy-authenticate", [.hopByHop, .refusedWithUnderscore]),
        // The client key's second carrier (SPEC §9).
        Entry("proxy-authorization", [.hopByHop, .refusedInConnection, .refusedWithUnderscore]),
        Entry("te", [.hopByHop, .refusedWithUnderscore]),
        Entry("trailer", [.hopByHop, .refusedWithUnderscore]),
        // Framing is the proxy's (SPEC §8; RFC 9112 §6.3): written from the parsed message, never copied.
        Entry("transfer-encoding", [.hopByHop, .setByProxy, .refusedInConnection, .refusedWithUnderscore]),
        Entry("upgrade", [.hopByHop, .refusedWithUnderscore]),
        Entry("content-length", [.setByProxy, .refusedInConnection, .refusedWithUnderscore]),
        // The upstream's host (RFC 9110 §7.2), and the route's token replacing any client credential
        // (CVE-2022-29226: never merged, never kept).
        Entry("host", [.setByProxy, .refusedInConnection, .refusedWithUnderscore]),
        Entry("authorization", [.setByProxy, .refusedInConnection, .refusedWithUnderscore]),
        // RFC 9449 §7.1: the proof that goes with a DPoP token is the proxy's; a client's would pair with the proxy's
        // token (or replay a proof it got elsewhere) and is never copied, on any route.
        Entry("dpop", [.setByProxy, .refusedInConnection, .refusedWithUnderscore]),
        Entry("x-request-id", [.setByProxy, .droppedFromResponse, .refusedInConnection, .refusedWithUnderscore]),
        Entry("x-bearer-proxy-key", [.droppedFromRequest, .refusedInConnection, .refusedWithUnderscore]),
        // RFC 7239: spoofable; added by the proxy only if the route asks (`X-Forwarded-*`, by prefix below).
        Entry("forwarded", [.droppedFromRequest, .refusedWithUnderscore]),
        // The browser checks (docs/security.md).
        Entry("origin", [.decidedOnce, .refusedWithUnderscore]),
        Entry("sec-fetch-site", [.decidedOnce, .refusedWithUnderscore]),
        Entry("access-control-request-method", [.decidedOnce, .refusedWithUnderscore]),
        Entry("access-control-request-headers", [.decidedOnce, .refusedWithUnderscore]),
        Entry("x-http-method-override", [.methodOverride, .refusedWithUnderscore]),
        Entry("x-http-method", [.methodOverride, .refusedWithUnderscore]),
        Entry("x-method-override", [.methodOverride, .refusedWithUnderscore]),
    ]

    /// Rows that hold for every field whose name starts so.
    @usableFromInline
    static let prefixEntries: [Entry] = [
        Entry("x-forwarded-", [.droppedFromRequest, .refusedWithUnderscore])
    ]

    /// ``entries`` by name length: a lookup compares a name only with the few rows of its length.
    @usableFromInline
    static let entriesByLength: [[Entry]] = {
        let longest = entries.map(\.name.utf8CodeUnitCount).max() ?? 0
        var table = [[Entry]](repeating: [], count: longest + 1)
        for entry in entries { table[entry.name.utf8CodeUnitCount].append(entry) }
        return table
    }()

    /// The rules of the field `name` (any case); empty for a field the proxy treats like any other.
    ///
    /// Inlinable, like the table it reads: the data plane, another target, looks up every header of every request
    /// (bench/counts.sh: 27 more retains per request when it was a call into another module).
    @inlinable
    package static func rules(of name: String) -> Rules {
        rules(ofBytes: name.utf8)
    }

    @inlinable
    package static func rules<Bytes: Collection<UInt8>>(ofBytes name: Bytes) -> Rules {
        let count = name.count
        if count < entriesByLength.count {
            for entry in entriesByLength[count] where FieldName.equals(bytes: name, entry.name) {
                return entry.rules
            }
        }
        for entry in prefixEntries where FieldName.hasPrefix(bytes: name, entry.name) { return entry.rules }
        return []
    }

    /// ``rules(of:)`` for the name at `bytes[name]`: a parsed head's field read where it lies.
    @inlinable
    package static func rules(of bytes: Span<UInt8>, _ name: Range<Int>) -> Rules {
        let count = name.count
        if count < entriesByLength.count {
            for entry in entriesByLength[count] where FieldName.equals(bytes, name, entry.name) {
                return entry.rules
            }
        }
        for entry in prefixEntries where FieldName.hasPrefix(bytes, name, entry.name) { return entry.rules }
        return []
    }

    /// The options of `headers`' `Connection` fields (RFC 9110 §7.6.1), lowercased, that are not hop-by-hop already:
    /// fields that must go with `Connection` itself. The usual `Connection: keep-alive` gives an empty list, with no
    /// allocation.
    package static func connectionOptions(in headers: HTTPHeaders) -> [String] {
        var options: [String] = []
        // Looked up by name rather than by iterating: iterating `HTTPHeaders` copies every name and value out (a
        // retain each), and this runs twice per proxied request. The lookup is ASCII case-insensitive, like ours.
        for value in headers["connection"] {
            HopByHop.forEachOption(in: value) { option in
                if !rules(ofBytes: option).contains(.hopByHop) {
                    options.append(String(decoding: option, as: UTF8.self).lowercased())
                }
            }
        }
        return options
    }

    /// Whether the field `name` (any case) must not be copied in `direction` (``Rules/notForwardedUp`` or
    /// ``Rules/notForwardedDown``), given the message's connection options.
    @inlinable
    package static func isDropped(_ name: String, _ direction: Rules, options: [String]) -> Bool {
        !rules(of: name).isDisjoint(with: direction) || options.contains { FieldName.equals(name, lowercased: $0) }
    }
}
