/// A fake server a test starts and must stop whatever happens.
protocol TestServer: Sendable {
    func shutdown() async
}

extension TestServer {
    /// Runs `body` with `server`, then shuts it down — also when `body` throws.
    static func using<T>(_ server: Self, _ body: (Self) async throws -> T) async throws -> T {
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}
