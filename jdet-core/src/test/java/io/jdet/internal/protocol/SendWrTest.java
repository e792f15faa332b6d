package io.jdet.internal.protocol;

import io.jdet.WcStatus;
import io.jdet.WcType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A send queue slot: which kinds run locally, which wait for a response, and what a reuse clears. */
class SendWrTest {
    @Test
    void bindsAndInvalidatesRunLocallyAndReadsAndAtomicsWaitForAResponse() {
        final int[] kinds = {SendWr.KIND_SEND, SendWr.KIND_WRITE, SendWr.KIND_READ, SendWr.KIND_COMP_EXCH,
            SendWr.KIND_FETCH_ADD, SendWr.KIND_BIND, SendWr.KIND_BIND_TYPE2, SendWr.KIND_LOCAL_INVALIDATE};
        final String expected = "send: - -|write: - -|read: - response|cmp: - response|add: - response|"
            + "bind: local -|bind2: local -|inv: local -|";
        final String[] names = {"send", "write", "read", "cmp", "add", "bind", "bind2", "inv"};
        final StringBuilder got = new StringBuilder();
        final SendWr w = new SendWr(1);
        for (int i = 0; i < kinds.length; i++) {
            w.kind = kinds[i];
            got.append(names[i]).append(": ").append(w.isLocal() ? "local" : "-").append(' ')
                .append(w.needsResponse() ? "response" : "-").append('|');
        }
        assertEquals(expected, got.toString());
    }

    @Test
    void aReusedSlotForgetsItsLastRequest() {
        final SendWr w = new SendWr(2);
        w.immediate = 5;
        w.remoteAddress = 6;
        w.rKey = 7;
        w.operand1 = 8;
        w.operand2 = 9;
        w.window = new Object();
        w.bindRegion = new Object();
        w.state = SendWr.DONE;
        w.status = WcStatus.REMOTE_OP_ERR;
        w.resultLength = 10;
        w.rnrRetries = 3;
        w.bytesReceived = 11;
        w.segments.count = 2;
        w.segments.total = 12;
        w.reset(42, SendWr.KIND_WRITE, WcType.RDMA_WRITE, 1);
        assertEquals(42, w.id);
        assertEquals(SendWr.KIND_WRITE, w.kind);
        assertEquals(WcType.RDMA_WRITE, w.type);
        assertEquals(1, w.flags);
        assertEquals(SendWr.QUEUED, w.state);
        assertEquals(WcStatus.SUCCESS, w.status);
        assertEquals(0, w.immediate + w.remoteAddress + w.rKey + w.operand1 + w.operand2 + w.resultLength
            + w.rnrRetries + w.bytesReceived + w.segments.count + w.segments.total);
        assertNull(w.window);
        assertNull(w.bindRegion);
    }
}
