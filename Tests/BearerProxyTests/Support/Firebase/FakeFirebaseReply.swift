/// What `FakeFirebaseHandler` does with one request, as decided when it has fully arrived.
enum FakeFirebaseReply: Sendable {
    /// Write this response.
    case respond(FakeFirebaseResponse)
    /// Never answer; the connection stays open until the client or `shutdown()` closes it.
    case hang
    /// Close the connection without answering.
    case drop
}
