import BearerCodec
import NIOCore
import NIOHTTP1

/// A client's request head as the codec read it: NIOHTTP1's head, which the checks above the decoder still read,
/// and the head's own bytes with the codec's offsets, from which the upstream's head is written in one pass
/// (``Forwarding``, #24 condition 5).
package struct ClientRequest: Sendable, Equatable {
    package let head: HTTPRequestHead
    /// The head, its empty line included: a slice of the bytes read, not a copy.
    package let bytes: ByteBuffer
    /// Offsets into ``bytes``' readable bytes.
    package let parsed: RequestHead

    package init(head: HTTPRequestHead, bytes: ByteBuffer, parsed: RequestHead) {
        self.head = head
        self.bytes = bytes
        self.parsed = parsed
    }
}

/// What ``RequestDecoder`` delivers for each client request. Trailers are not delivered: the proxy drops them
/// (SPEC §8).
package enum ClientRequestPart: Sendable, Equatable {
    /// Indirect: a part travels in a `NIOAny`, which holds three words inline and boxes anything larger — with the
    /// head inline, every body part and end would cost an allocation (bench/counts.sh: 2 per message).
    indirect case head(ClientRequest)
    case body(ByteBuffer)
    case end

    package var isHead: Bool {
        if case .head = self { return true }
        return false
    }

    package var isEnd: Bool {
        if case .end = self { return true }
        return false
    }
}
