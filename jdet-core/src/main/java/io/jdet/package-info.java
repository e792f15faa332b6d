/**
 * The jdet verbs: RDMA semantics (protection domains, registered memory, memory windows, queue pairs, completion
 * queues, send and receive, RDMA read and write, atomics, events, a connection manager) over an in-process fabric
 * or UDP, in the shape of Intel's DET and of {@code libibverbs}.
 *
 * <h2>A worked example</h2>
 * Two NICs on the in-process fabric, one queue pair each; B reads 16 bytes of A's memory one-sided. Between
 * processes, open {@code udp:<address>[:<port>]} NICs and let the {@link io.jdet.ConnectionManager} connect the
 * queue pairs and carry the {@link io.jdet.RemoteRegion} in its private data.
 * <pre>{@code
 * try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
 *     Nic nicA = det.openNic("loop", null), nicB = det.openNic("loop", null);
 *     ProtectionDomain pdA = nicA.allocPd(), pdB = nicB.allocPd();
 *     CompletionQueue cqA = nicA.createCq(16, null), cqB = nicB.createCq(16, null);
 *     QueuePair qpA = pdA.createQp(QpCreate.of(cqA, 8, 1)), qpB = pdB.createQp(QpCreate.of(cqB, 8, 1));
 *     // or the connection manager; the start sequence numbers are random: exchange them with the numbers
 *     qpA.modify(new QpModify().connect(nicB.address(), qpB.number(), qpB.query().localPsn()));
 *     qpB.modify(new QpModify().connect(nicA.address(), qpA.number(), qpA.query().localPsn()));
 *
 *     MemorySegment bufA = arena.allocate(64), bufB = arena.allocate(64);
 *     MemoryRegion mrA = pdA.regMr(bufA, Access.LOCAL_READ | Access.REMOTE_READ);
 *     MemoryRegion mrB = pdB.regMr(bufB, Access.LOCAL_WRITE);
 *     bufA.setString(0, "read me, B");
 *
 *     RemoteRegion remote = RemoteRegion.of(mrA);                          // what A tells B
 *     qpB.read(1, new DataSegment[] {new DataSegment().set(mrB, 0, 16)}, 1, remote.address(), remote.rKey(), 0);
 *     WorkCompletion[] wc = {new WorkCompletion()};
 *     while (cqB.poll(wc) == 0) {                                          // polling drives the protocol too
 *         Thread.onSpinWait();
 *     }
 *     assert wc[0].status() == WcStatus.SUCCESS && bufB.getString(0).equals("read me, B");
 * }
 * }</pre>
 *
 * <h2>Errors</h2>
 * A verb that fails raises a {@link io.jdet.DetException} carrying the {@link io.jdet.Errno} its DET man page
 * names; each method's javadoc lists them. What happens after a work request was accepted is reported by its
 * {@link io.jdet.WorkCompletion}'s {@link io.jdet.WcStatus}. Using a closed object (a closed device, NIC, event
 * queue or listener, a deallocated domain, a destroyed queue pair, completion queue or window, a deregistered
 * region), or handing one to a verb, raises {@link java.lang.IllegalStateException}; a null argument raises
 * {@link java.lang.IllegalArgumentException}. A refused connection raises
 * {@link io.jdet.ConnectionRejectedException}, with the peer's private data.
 *
 * <h2>Threads and allocation</h2>
 * Every object is thread safe. Posting and polling allocate nothing: {@link io.jdet.DataSegment},
 * {@link io.jdet.WorkCompletion} and {@link io.jdet.EventRecord} are mutable, caller-owned and meant for reuse.
 * Registered memory must be reachable from the NIC's progress thread (a shared, automatic or global arena).
 */
package io.jdet;
