@testable import BearerCodec

/// The codec's entry points over arrays, as results.
extension Array where Element == UInt8 {
    func parseRequest() -> Result<RequestHead?, HeadError> {
        Result { () throws(HeadError) in try RequestHead.parse(span) }
    }

    func parseResponse(requestWasHead: Bool, upgradeRequested: Bool = false) -> Result<ResponseHead?, HeadError> {
        Result { () throws(HeadError) in
            try ResponseHead.parse(span, requestWasHead: requestWasHead, upgradeRequested: upgradeRequested)
        }
    }

    /// Runs `body` through `chunked`, piece by piece: the runs read, or the refusal.
    func readChunks(_ chunked: inout ChunkedBody) -> Result<[(kind: ChunkedBody.Kind, bytes: [UInt8])], HeadError> {
        let bytes = span
        var runs: [(kind: ChunkedBody.Kind, bytes: [UInt8])] = []
        var index = 0
        do throws(HeadError) {
            while index < bytes.count, !chunked.isComplete {
                let run = try chunked.next(in: bytes, from: index)
                if run.end == index { break }
                runs.append((run.kind, Array(self[index..<run.end])))
                index = run.end
            }
        } catch {
            return .failure(error)
        }
        return .success(runs)
    }
}
