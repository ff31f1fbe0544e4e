import NIOCore
import Synchronization

/// What the raw upstream has seen, shared between its connections' event loops and the test.
final class RawUpstreamState: Sendable {
    struct Connection: Sendable {
        var wire: [UInt8] = []
        var plain: [UInt8] = []

        func bytes(_ layer: RawByteRecorder.Layer) -> [UInt8] {
            switch layer {
            case .wire: wire
            case .plain: plain
            }
        }
    }

    struct Observed: Sendable {
        var connections: [Int: Connection] = [:]
        var closed = 0
        var requests: [RawRequest] = []
        var held: [@Sendable (RawUpstream.Answer) -> Void] = []
    }

    /// At most this many bytes are kept per connection and layer.
    static let recordLimit = 256 * 1024

    private let watched: WatchedState<Observed>

    init(timerLoop: any EventLoop) {
        watched = WatchedState(Observed(), timerLoop: timerLoop) {
            "connections \($0.connections.count), closed \($0.closed), requests \($0.requests.count)"
        }
    }

    func read<T: Sendable>(_ body: (Observed) -> T) -> T { watched.read(body) }

    func wait(for what: String, timeout: Duration, until isMet: @escaping @Sendable (Observed) -> Bool) async throws {
        try await watched.wait(for: what, timeout: timeout, until: isMet)
    }

    var openChannels: [any Channel] { watched.openChannels }

    func connectionOpened(_ channel: any Channel) -> Int? {
        guard let id = watched.connectionOpened(channel) else { return nil }
        watched.mutate { $0.connections[id] = Connection() }
        return id
    }

    func connectionClosed(_ id: Int) {
        watched.connectionClosed(id)
        watched.mutate { $0.closed += 1 }
    }

    func record(_ bytes: ByteBuffer, on id: Int, _ layer: RawByteRecorder.Layer) {
        watched.mutate { observed in
            var connection = observed.connections[id] ?? Connection()
            let room = Self.recordLimit - connection.bytes(layer).count
            let kept = bytes.readableBytesView.prefix(max(0, room))
            switch layer {
            case .wire: connection.wire += kept
            case .plain: connection.plain += kept
            }
            observed.connections[id] = connection
        }
    }

    func record(_ request: RawRequest) {
        watched.mutate { $0.requests.append(request) }
    }

    func hold(_ answer: @escaping @Sendable (RawUpstream.Answer) -> Void) {
        watched.mutate { $0.held.append(answer) }
    }

    func takeHeld() -> [@Sendable (RawUpstream.Answer) -> Void] {
        watched.mutate { observed in
            defer { observed.held = [] }
            return observed.held
        }
    }

    func shutDown() -> [any Channel] {
        watched.shutDown { $0.held = [] }
    }
}
