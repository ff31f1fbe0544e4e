import NIOCore

/// Closing a client connection without losing its last answer.
///
/// A connection that closes with bytes of the client's still unread — the rest of a head or body the proxy refused,
/// a pipelined request after the last one — makes the kernel send RST instead of FIN, and an RST that reaches the
/// client before it has read the answer destroys the answer ("connection reset by peer"; RFC 9112 §9.6 warns of
/// exactly this). So the proxy closes as nginx's `lingering_close` does: once the answer is written it shuts down
/// its sending side (the client sees FIN after the answer), then reads and drops what the client still sends until
/// the client closes too, or for at most ``lingerLimit``.
extension ProxyConnectionHandler {
    /// The longest a closing connection keeps reading what its client still sends (nginx: `lingering_time` 30 s,
    /// `lingering_timeout` 5 s; a proxy on loopback needs far less).
    static let lingerLimit = TimeAmount.seconds(2)

    /// Closes once `written` (the answer) is done, lingering as described above; at once if there is no answer.
    func closeLingering(after written: EventLoopFuture<Void>?) {
        let context = self.context!
        guard let written else {
            closeClient()
            return
        }
        // The context captured, not read from the handler: it may have left the pipeline by then. Nothing is left
        // for the batch's end here: the answer was flushed when it was written, and nothing is written after it.
        written.assumeIsolated().whenComplete { [self] result in
            guard case .success = result, context.channel.isActive else {
                context.close(promise: nil)
                return
            }
            connection.linger()
            cancelTimer()
            context.close(mode: .output, promise: nil)
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerLimit) {
                context.close(promise: nil)
            }
            context.read()
        }
    }
}
