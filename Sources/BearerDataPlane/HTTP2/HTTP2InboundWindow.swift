/// When to give a client back the flow-control window its DATA used (RFC 9113 §5.2, §6.9), for one stream or for the
/// whole connection: once what the client may still send falls to half the target or below, a WINDOW_UPDATE tops it
/// up to the target — NIOHTTP2's own rule for the streams of its multiplexer, which the stream table does without.
///
/// Bytes the proxy holds and has not handed on (a stream whose exchange cannot take more yet) count as not given
/// back: the client's window stays used until they are delivered, which is how a stalled exchange stops its client
/// (RFC 9113 §5.2.2), one stream at a time.
struct HTTP2InboundWindow {
    /// The window the client is given, and topped up to.
    private let target: Int
    /// The window as NIOHTTP2 last told it; nil before it told any.
    private var lastSize: Int?
    /// Bytes received and held, not yet delivered.
    private var held = 0

    init(target: Int) {
        self.target = target
    }

    /// NIOHTTP2 tells the window's size (after DATA came, or an update went): the increment to send, if any.
    mutating func sizeChanged(to size: Int) -> Int? {
        lastSize = size
        return increment(forSize: size + held)
    }

    /// `bytes` of DATA came and are held.
    mutating func hold(_ bytes: Int) {
        held += bytes
    }

    /// `bytes` held were delivered: the increment to send, if any.
    mutating func delivered(_ bytes: Int) -> Int? {
        held -= bytes
        guard let lastSize else { return nil }
        return increment(forSize: lastSize + held)
    }

    private func increment(forSize size: Int) -> Int? {
        if size >= target { return nil }
        if size >= 0 {
            let increment = target - size
            return increment >= size ? increment : nil
        }
        // A window below zero (SETTINGS shrank it, RFC 9113 §6.9.2): back to the target, within 2^31-1.
        return min(target - size, Int(Int32.max))
    }
}
