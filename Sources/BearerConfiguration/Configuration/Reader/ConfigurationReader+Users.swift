import BearerHTTP
import BearerJSON

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigurationReader {
    /// `allowUsers`: users of this machine who may connect over loopback besides the proxy's own (SPEC §9), each a user
    /// name (resolved here, once) or a uid.
    func readAllowUsers(_ root: ObjectReader) -> [UInt32]? {
        guard let elements = root.array("allowUsers") else { return nil }
        var uids: [UInt32] = []
        for (index, element) in elements.enumerated() {
            let path = root.path("allowUsers").index(index)
            switch element {
            case .integer(let uid) where (0..<Int(UInt32.max)).contains(uid):
                if !uids.contains(UInt32(uid)) { uids.append(UInt32(uid)) }
            case .string(let name) where !name.isEmpty:
                guard let uid = Self.userID(named: name) else {
                    problems.report(path, "there is no user \"\(name)\" on this machine")
                    continue
                }
                if !uids.contains(uid) { uids.append(uid) }
            default:
                problems.report(path, "must be a user name or a uid (a whole number from 0 to 4294967294)")
            }
        }
        return uids
    }

    /// The uid of the user `name`, from the system's user database.
    static func userID(named name: String) -> UInt32? {
        #if canImport(Glibc)
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16 * 1024)
            let status = getpwnam_r(name, &entry, &buffer, buffer.count, &found)
            guard status == 0, found != nil else { return nil }
            return UInt32(entry.pw_uid)
        #else
            return nil
        #endif
    }
}
