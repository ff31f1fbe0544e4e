import Synchronization

@testable import BearerSignIn

/// The DNS-rebinding attacker's resolver (#25): a name's first question gets `first`, every later one `then`, and
/// every question is counted — so a test can tell how often a name was resolved, and which answer was used.
final class RebindingResolver: HostResolver {
    let first: [IPAddress]
    let then: [IPAddress]
    private let asked = Mutex<[String: Int]>([:])

    init(first: [IPAddress], then: [IPAddress]) {
        self.first = first
        self.then = then
    }

    /// A resolver whose answer never changes.
    convenience init(always answer: [IPAddress]) {
        self.init(first: answer, then: answer)
    }

    func addresses(of host: String) async throws(DiscoveryError) -> [IPAddress] {
        let count = asked.withLock { asked in
            asked[host, default: 0] += 1
            return asked[host, default: 0]
        }
        return count == 1 ? first : then
    }

    /// How often `host` was resolved.
    func questions(about host: String) -> Int { asked.withLock { $0[host, default: 0] } }
}
