/// Why a head or a chunked body was refused. Every case is a refusal: the parser never repairs or guesses.
package enum HeadError: Error, Equatable, Sendable {
    /// Not HTTP/1.1 as RFC 9112 writes it, or an ambiguity the proxy will not resolve for the upstream: 400.
    case malformed(Reason)
    /// The head (or a chunk's trailer section) is longer than the limit: 431.
    case headTooLarge
    /// The request-target is longer than the limit: 414.
    case targetTooLong
    /// An HTTP version other than 1.0 and 1.1: 505.
    case unsupportedVersion
    /// A method outside ``KnownMethod``: 501.
    case unknownMethod
    /// CONNECT, which asks for a tunnel: 405.
    case methodNotAllowed

    /// What exactly was wrong, for tests and logs; never the bytes themselves (they may hold a credential).
    package enum Reason: Sendable, Equatable {
        case leadingEmptyLine, requestLine, requestTarget, statusLine
        case fieldName, spaceBeforeColon, obsFold, bareCR, bareLF, fieldValue, invalidUTF8
        case contentLength, duplicateContentLength, transferEncoding, contentLengthWithTransferEncoding
        case host, connection, framingInInformational, informationalClosing, switchingProtocols
        case chunkSize, chunkExtension, chunkData, trailer
    }

    /// The status a server answers with (RFC 9110 §15).
    package var status: Int {
        switch self {
        case .malformed: 400
        case .headTooLarge: 431
        case .targetTooLong: 414
        case .unsupportedVersion: 505
        case .unknownMethod: 501
        case .methodNotAllowed: 405
        }
    }
}
