/// What `FakeUpstream` observed for one request: its head and its body's length and SHA-256.
///
/// A request is recorded as soon as its head arrives (`bodyLength` 0, `complete` false); its body fields are
/// settled when the request ends or its connection closes. For the behaviours that answer after the whole request
/// (`.echo`, `.respond`, `.download`, `.events`, `.expectContinue`, `.silent`) the record is final before the first
/// response byte is written, so it is settled by the time a client has the response. For `.rejectEarly` and
/// `.closeImmediately`, wait with `FakeUpstream.waitForClosedConnections` (or `waitForRequests(n, complete: true)`)
/// before asserting on body fields.
struct RecordedRequest: Sendable {
    /// The request head as received.
    var head: RequestHead
    /// Which accepted connection carried it (1 = the first connection accepted by this upstream).
    var connectionID: Int
    /// Body bytes received (0 until the request ends or its connection closes).
    var bodyLength: Int
    /// Lower-case hex SHA-256 of the body bytes received.
    var bodySHA256: String
    /// The first `FakeUpstream.recordedBodyPrefixCap` (64 KiB) body bytes, for asserting on small bodies.
    var bodyPrefix: [UInt8]
    /// Whether the request's end was received (false if the connection closed mid-body or the upstream stopped
    /// reading).
    var complete: Bool

    /// The body prefix as UTF-8 text.
    var bodyText: String {
        String(decoding: self.bodyPrefix, as: UTF8.self)
    }
}
