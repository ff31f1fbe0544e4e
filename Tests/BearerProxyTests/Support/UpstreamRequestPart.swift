import NIOCore

@testable import BearerCodec
@testable import BearerDataPlane

/// What a fake upstream connection was asked to send, in order (the product's ``UpstreamHandler`` frames these as
/// bytes at once; the tests record them).
enum UpstreamRequestPart {
    case head(UpstreamRequestHead)
    case body(ByteBuffer)
    case end
}
