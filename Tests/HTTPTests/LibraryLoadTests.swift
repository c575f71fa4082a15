import POSIXSupport
import Testing

/// A library load that failed is tried again at the next use (issue 41: libcurl failing once
/// out of descriptors failed every later refresh); one that succeeded is kept.
@Suite struct LibraryLoadTests {
    @Test func aFailedLoadIsTriedAgainAndASuccessKept() {
        let loaded = LoadedOnSuccess<Int, LoadFailed>()
        let attempts = PthreadMutex(0)
        func load() -> Result<Int, LoadFailed> {
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            return attempt < 3 ? .failure(LoadFailed()) : .success(attempt)
        }
        #expect(throws: LoadFailed.self) { try loaded.get(load).get() }
        #expect(throws: LoadFailed.self) { try loaded.get(load).get() }
        #expect((try? loaded.get(load).get()) == 3)
        #expect((try? loaded.get(load).get()) == 3 && attempts.withLock { $0 } == 3)
    }
}

/// A load that failed (out of descriptors, say).
private struct LoadFailed: Error {}
