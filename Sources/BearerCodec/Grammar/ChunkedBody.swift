/// Finds the end of a chunked body (RFC 9112 §7.1) in bytes that arrive in any pieces, validating its framing, so
/// that a proxy can pass the chunks through as they are.
///
/// ``next(in:from:)`` reads a maximal run of one kind of bytes — chunk data, framing (size lines, CRLFs, the last
/// chunk and the final CRLF), or trailer fields — and says where it ends. Strict: a chunk size of at most 15 hex
/// digits, extensions only as `;name[=token|quoted-string]` without whitespace, CRLF and nothing else after each
/// line and each chunk, trailer fields with the head's field-line rules (obs-text refused), all of a line's
/// framing bytes within ``maximumLineBytes``.
package struct ChunkedBody: Sendable, Equatable {
    /// What a run of bytes is.
    package enum Kind: Sendable, Equatable {
        case data, framing, trailer
    }

    /// A run of one kind: `start..<end`, with `end` where ``next(in:from:)`` stopped.
    package struct Run: Sendable, Equatable {
        package var kind: Kind
        package var end: Int
    }

    /// The longest chunk-size line (extensions included) or trailer section accepted.
    static let maximumLineBytes = 4096

    private enum State: Sendable, Equatable {
        case size(digits: Int, value: Int)
        case extensionName(started: Bool)
        case extensionValueStart
        case extensionToken
        case quoted
        case quotedPair
        case afterQuote
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerName
        case trailerValue
        case trailerLF
        case finalLF
        case done
    }

    private var state = State.size(digits: 0, value: 0)
    private var lineBytes = 0
    private var trailerBytes = 0

    package init() {}

    /// The body's last byte (the final CRLF) has been read.
    package var isComplete: Bool { state == .done }

    /// Reads from `start` a run of bytes of one kind; a run ending at `start` means `bytes` holds no more (or the
    /// body is complete).
    package mutating func next(in bytes: Span<UInt8>, from start: Int) throws(HeadError) -> Run {
        var index = start
        if case .data(let remaining) = state {
            let count = min(remaining, bytes.count - index)
            index += count
            state = remaining == count ? .dataCR : .data(remaining: remaining - count)
            return Run(kind: .data, end: index)
        }
        guard index < bytes.count else { return Run(kind: .framing, end: index) }
        let kind = Self.kind(of: state, next: bytes[index])
        while index < bytes.count, state != .done, Self.kind(of: state, next: bytes[index]) == kind {
            try step(bytes[index])
            index += 1
        }
        return Run(kind: kind, end: index)
    }

    /// What the next byte is: a line start holding anything but CR begins a trailer field.
    private static func kind(of state: State, next byte: UInt8) -> Kind {
        switch state {
        case .data: .data
        case .trailerName, .trailerValue, .trailerLF: .trailer
        case .trailerLineStart where byte != ASCII.cr: .trailer
        default: .framing
        }
    }

    private mutating func step(_ byte: UInt8) throws(HeadError) {
        switch state {
        case .size(let digits, let value):
            lineBytes += 1
            if let digit = ByteClass.hexValue(byte) {
                guard digits < 15 else { throw .malformed(.chunkSize) }
                state = .size(digits: digits + 1, value: value << 4 | digit)
            } else if digits == 0 {
                throw .malformed(.chunkSize)
            } else if byte == UInt8(ascii: ";") {
                pendingSize = value
                state = .extensionName(started: false)
            } else if byte == ASCII.cr {
                state = .sizeLF(value: value)
            } else {
                throw .malformed(.chunkSize)
            }
        case .extensionName(let started):
            try countLineByte()
            if ByteClass.isTchar(byte) {
                state = .extensionName(started: true)
            } else if started, byte == UInt8(ascii: "=") {
                state = .extensionValueStart
            } else if started, byte == UInt8(ascii: ";") {
                state = .extensionName(started: false)
            } else if started, byte == ASCII.cr {
                state = .sizeLF(value: pendingSize)
            } else {
                throw .malformed(.chunkExtension)
            }
        case .extensionValueStart:
            try countLineByte()
            if ByteClass.isTchar(byte) {
                state = .extensionToken
            } else if byte == UInt8(ascii: "\"") {
                state = .quoted
            } else {
                throw .malformed(.chunkExtension)
            }
        case .extensionToken:
            try countLineByte()
            if ByteClass.isTchar(byte) {
                break
            } else if byte == UInt8(ascii: ";") {
                state = .extensionName(started: false)
            } else if byte == ASCII.cr {
                state = .sizeLF(value: pendingSize)
            } else {
                throw .malformed(.chunkExtension)
            }
        case .quoted:
            try countLineByte()
            // qdtext (RFC 9110 §5.6.4) less obs-text
            if byte == UInt8(ascii: "\"") {
                state = .afterQuote
            } else if byte == UInt8(ascii: "\\") {
                state = .quotedPair
            } else if !(ByteClass.isVisible(byte) || byte == ASCII.space || byte == ASCII.tab) {
                throw .malformed(.chunkExtension)
            }
        case .quotedPair:
            try countLineByte()
            guard ByteClass.isVisible(byte) || byte == ASCII.space || byte == ASCII.tab else {
                throw .malformed(.chunkExtension)
            }
            state = .quoted
        case .afterQuote:
            try countLineByte()
            if byte == UInt8(ascii: ";") {
                state = .extensionName(started: false)
            } else if byte == ASCII.cr {
                state = .sizeLF(value: pendingSize)
            } else {
                throw .malformed(.chunkExtension)
            }
        case .sizeLF(let value):
            guard byte == ASCII.lf else { throw .malformed(.bareCR) }
            lineBytes = 0
            state = value == 0 ? .trailerLineStart : .data(remaining: value)
        case .data:
            preconditionFailure("data is read in bulk")
        case .dataCR:
            guard byte == ASCII.cr else { throw .malformed(.chunkData) }
            state = .dataLF
        case .dataLF:
            guard byte == ASCII.lf else { throw .malformed(.bareCR) }
            state = .size(digits: 0, value: 0)
        case .trailerLineStart:
            if byte == ASCII.cr {
                state = .finalLF
            } else if ByteClass.isTchar(byte) {
                try countTrailerByte()
                trailerName = FramingName()
                trailerName.note(byte)
                state = .trailerName
            } else if byte == ASCII.space || byte == ASCII.tab {
                throw .malformed(.obsFold)
            } else {
                throw .malformed(.trailer)
            }
        case .trailerName:
            try countTrailerByte()
            if byte == ASCII.colon {
                // RFC 9110 §6.5.1: framing fields are never trailers; llhttp and Go refuse them there.
                guard !trailerName.isFramingField else { throw .malformed(.trailer) }
                state = .trailerValue
            } else if ByteClass.isTchar(byte) {
                trailerName.note(byte)
            } else {
                throw .malformed(byte == ASCII.space || byte == ASCII.tab ? .spaceBeforeColon : .trailer)
            }
        case .trailerValue:
            try countTrailerByte()
            if byte == ASCII.cr {
                state = .trailerLF
            } else if !(ByteClass.isVisible(byte) || byte == ASCII.space || byte == ASCII.tab) {
                throw .malformed(.trailer)
            }
        case .trailerLF:
            try countTrailerByte()
            guard byte == ASCII.lf else { throw .malformed(.bareCR) }
            state = .trailerLineStart
        case .finalLF:
            guard byte == ASCII.lf else { throw .malformed(.bareCR) }
            state = .done
        case .done:
            preconditionFailure("nothing is read after the end")
        }
    }

    /// The size read before an extension, kept while the extension is read.
    private var pendingSize = 0
    /// The trailer field name being read, as far as telling a framing field apart goes.
    private var trailerName = FramingName()

    private mutating func countLineByte() throws(HeadError) {
        lineBytes += 1
        guard lineBytes <= Self.maximumLineBytes else { throw .malformed(.chunkExtension) }
    }

    private mutating func countTrailerByte() throws(HeadError) {
        trailerBytes += 1
        guard trailerBytes <= Self.maximumLineBytes else { throw .headTooLarge }
    }
}

/// Whether a field name read a byte at a time is Content-Length or Transfer-Encoding, in any case, without keeping
/// its bytes.
private struct FramingName: Sendable, Equatable {
    private var length = 0
    private var contentLength = true
    private var transferEncoding = true

    mutating func note(_ byte: UInt8) {
        contentLength = contentLength && Self.matches(byte, at: length, "content-length")
        transferEncoding = transferEncoding && Self.matches(byte, at: length, "transfer-encoding")
        length += 1
    }

    var isFramingField: Bool {
        (contentLength && length == 14) || (transferEncoding && length == 17)
    }

    private static func matches(_ byte: UInt8, at index: Int, _ name: StaticString) -> Bool {
        index < name.utf8CodeUnitCount && byte | 0x20 == name.utf8Start[index]
    }
}
