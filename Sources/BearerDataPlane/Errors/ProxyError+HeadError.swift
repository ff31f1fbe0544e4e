import BearerCodec

extension ProxyError {
    /// The answer to a request that ``RequestDecoder`` refused: the codec's status (RFC 9110 §15), with a detail
    /// that says what was wrong and never quotes the bytes (they may hold a credential).
    init(refusal: HeadError) {
        switch refusal {
        case .headTooLarge: self = .headersTooLarge
        case .targetTooLong: self = .uriTooLong
        case .unsupportedVersion: self = .versionNotSupported
        case .unknownMethod: self = .methodNotImplemented
        // SPEC §9: a reverse proxy makes no tunnel, and says so as it did before the codec.
        case .methodNotAllowed: self = .methodNotAllowed(method: "CONNECT", allowed: [])
        case .malformed(let reason): self = .badRequest(detail: Self.detail(reason))
        }
    }

    private static func detail(_ reason: HeadError.Reason) -> String {
        switch reason {
        case .leadingEmptyLine: "The request begins with an empty line (RFC 9112 §2.2)."
        case .requestLine: "The request line is not \"method SP request-target SP HTTP-version\" (RFC 9112 §3)."
        case .requestTarget:
            "The request target is not an origin-form or absolute-form target of valid characters (RFC 9112 §3.2)."
        case .statusLine: "The message is not a request."
        case .fieldName: "A header field name is not a token (RFC 9110 §5.1)."
        case .spaceBeforeColon: "A header field name is followed by whitespace before its colon (RFC 9112 §5.1)."
        case .obsFold: "A header field value is folded onto a second line (obs-fold, RFC 9112 §5.2)."
        case .bareCR: "A line ends in a CR without LF (RFC 9112 §2.2)."
        case .bareLF: "A line ends in an LF without CR (RFC 9112 §2.2)."
        case .fieldValue: "A header field value contains a control character (RFC 9110 §5.5)."
        case .invalidUTF8:
            "A header field value contains bytes that are not valid UTF-8; they cannot be forwarded unchanged."
        case .contentLength: "Content-Length is not a single decimal number (RFC 9110 §8.6)."
        case .duplicateContentLength: "The request has more than one Content-Length (RFC 9112 §6.3)."
        case .transferEncoding:
            "Transfer-Encoding must be exactly \"chunked\", once, in an HTTP/1.1 request (RFC 9112 §6.1)."
        case .contentLengthWithTransferEncoding:
            "The request has both Content-Length and Transfer-Encoding (RFC 9112 §6.3)."
        case .host: "An HTTP/1.1 request carries exactly one Host header, a valid host[:port] (RFC 9112 §3.2)."
        case .connection:
            "Connection names a header the proxy decides itself (Host, Authorization, the framing), or too many."
        case .framingInInformational, .informationalClosing, .switchingProtocols: "The message is not a request."
        case .chunkSize: "A chunk size is not 1 to 15 hexadecimal digits (RFC 9112 §7.1)."
        case .chunkExtension: "A chunk extension is malformed or too long (RFC 9112 §7.1.1)."
        case .chunkData: "A chunk's data is not followed by CRLF (RFC 9112 §7.1)."
        case .trailer: "A trailer field of the chunked body is malformed (RFC 9112 §7.1.2)."
        }
    }
}

extension HeadError {
    /// The reason as a metric label and log value: `bearer_proxy_requests_refused_total{reason}`.
    package var label: String {
        switch self {
        case .headTooLarge: "head_too_large"
        case .targetTooLong: "target_too_long"
        case .unsupportedVersion: "unsupported_version"
        case .unknownMethod: "unknown_method"
        case .methodNotAllowed: "connect"
        case .malformed(let reason):
            switch reason {
            case .leadingEmptyLine: "leading_empty_line"
            case .requestLine: "request_line"
            case .requestTarget: "request_target"
            case .statusLine: "status_line"
            case .fieldName: "field_name"
            case .spaceBeforeColon: "space_before_colon"
            case .obsFold: "obs_fold"
            case .bareCR: "bare_cr"
            case .bareLF: "bare_lf"
            case .fieldValue: "field_value"
            case .invalidUTF8: "invalid_utf8"
            case .contentLength: "content_length"
            case .duplicateContentLength: "duplicate_content_length"
            case .transferEncoding: "transfer_encoding"
            case .contentLengthWithTransferEncoding: "content_length_with_transfer_encoding"
            case .host: "host"
            case .connection: "connection"
            case .framingInInformational: "framing_in_informational"
            case .informationalClosing: "informational_closing"
            case .switchingProtocols: "switching_protocols"
            case .chunkSize: "chunk_size"
            case .chunkExtension: "chunk_extension"
            case .chunkData: "chunk_data"
            case .trailer: "trailer"
            }
        }
    }
}
