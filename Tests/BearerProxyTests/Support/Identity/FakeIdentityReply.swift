/// What `FakeIdentityHandler` does with one request, as decided when the request has fully arrived.
enum FakeIdentityReply: Sendable {
    /// Write `response` after `delay` (nil: at once). `holdable` responses wait while the provider's latch is on
    /// (`FakeIdentityProvider.holdTokenResponses()`): every token-endpoint response is holdable.
    case respond(FakeIdentityResponse, delay: Duration?, holdable: Bool)
    /// Never answer; the connection stays open until the client or `shutdown()` closes it.
    case hang
    /// Close the connection without answering.
    case drop
}
