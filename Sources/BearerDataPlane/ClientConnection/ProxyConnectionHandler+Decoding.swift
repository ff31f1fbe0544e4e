import BearerCodec
import NIOCore

/// The client's bytes read into request parts by ``RequestDecoder`` inline, rather than by a `ByteToMessageHandler`
/// before this handler: a part that crossed the pipeline as a `NIOAny` cost a dynamic cast and a generic-metadata
/// lookup, and the handler's own bookkeeping more (#24; docs/benchmarks.md, session 16).
///
/// What the `ByteToMessageHandler` did, done here: bytes that arrive while the decoder runs (a read delivered
/// synchronously) are added and decoded by the run in progress; a refusal, or the client leaving, stops the reading
/// for good (``ConnectionStateMachine/Reading``); at the end of the input a head in pieces is parsed once more.
extension ProxyConnectionHandler {
    /// Decodes what `bytes` adds to what the decoder holds, handing each part on (``received(_:)``).
    func receive(_ bytes: ByteBuffer) {
        decoder.append(bytes)
        decodeInbound(seenEOF: false)
    }

    /// Runs the decoder until it needs more bytes; `seenEOF` at the end of the input.
    func decodeInbound(seenEOF: Bool) {
        guard !decoding, connection.decodes else { return }
        decoding = true
        defer { decoding = false }
        do {
            while let part = try decoder.next(seenEOF: seenEOF) {
                received(part)
                if !connection.decodes { return }
            }
        } catch {
            decodeFailed(error)
        }
    }
}
