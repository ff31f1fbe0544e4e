import BearerTelemetry
import NIOCore
import NIOHTTP2

/// Ends an HTTP/2 connection after a connection error (RFC 9113 §5.4.1): NIOHTTP2 has sent GOAWAY — for a flood, a
/// broken frame, a window past 2^31-1 — and reports the error up the pipeline, where nothing would close it. A stream
/// error ends its stream only: NIOHTTP2 has reset it (§5.4.2) and the connection serves on.
///
/// NIOHTTP2 reports both kinds as the bare error, so the stream errors are named here: a malformed request (§8.1.1).
/// Anything else ends the connection — the safe side for an error this list does not know, and what NIOHTTP2 has
/// already decided for the errors that could be either (a stream past the concurrency limit, a frame for a stream
/// that does not exist: it sent GOAWAY for those). Counted as `bearer_proxy_requests_refused_total{reason="http2_malformed"}`
/// and `bearer_proxy_connections_refused_total{reason="http2_connection_error"}`; a client that keeps causing stream
/// errors meets NIOHTTP2's stream-error rate limit, a connection error.
final class HTTP2ConnectionErrors: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let metrics: ProxyMetrics
    private var closed = false

    init(metrics: ProxyMetrics) {
        self.metrics = metrics
    }

    /// Whether `error` ended one stream only.
    static func isStreamError(_ error: any Error) -> Bool {
        switch error {
        case is NIOHTTP2Errors.StreamError, is NIOHTTP2Errors.ForbiddenHeaderField,
            is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName, is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue,
            is NIOHTTP2Errors.InvalidPseudoHeaders, is NIOHTTP2Errors.InvalidPseudoHeaderValue,
            is NIOHTTP2Errors.DuplicatePseudoHeader, is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader,
            is NIOHTTP2Errors.UnknownPseudoHeader, is NIOHTTP2Errors.UnsupportedPseudoHeader,
            is NIOHTTP2Errors.EmptyPathHeader, is NIOHTTP2Errors.TrailersWithoutEndStream,
            is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue:
            true
        default:
            false
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if Self.isStreamError(error) {
            metrics.requestsRefused(reason: "http2_malformed").increment()
            return
        }
        guard !closed else { return }
        closed = true
        metrics.connectionsRefused(reason: "http2_connection_error").increment()
        context.close(promise: nil)
    }
}
