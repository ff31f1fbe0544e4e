/// The sizes a head may reach. Defaults: nginx's `large_client_header_buffers` order of magnitude, and the product's
/// own limits (8 KiB request-target, 100 fields).
package struct HeadLimits: Sendable, Equatable {
    /// Bytes of the whole head, request or status line and the empty line included. Default 32 KiB.
    package var headBytes = 32 * 1024
    /// Bytes of the request-target. Default 8 KiB.
    var targetBytes = 8 * 1024
    /// Field lines. Default 100.
    package var fields = 100

    package init() {}

    package init(headBytes: Int, targetBytes: Int, fields: Int) {
        self.headBytes = headBytes
        self.targetBytes = targetBytes
        self.fields = fields
    }
}
