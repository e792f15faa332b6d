package io.jdet.internal.cm;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stateless handshake cookie: bound to every field it covers, valid for its time slot and the next only. */
class CmCookieTest {
    private static final long PEER = 0x0A00_0001_1F90L;
    private static final int ID = 0x1234_5678;
    private static final int SERVICE = 0x0102_0304;
    private static final int QP = 0x0A0B_0C0D;
    private static final long NOW = 1_000 * CmCookie.SLOT_NS + 17;

    @Test
    void isValidInItsSlotAndTheNextOnly() {
        final CmCookie c = new CmCookie();
        final long cookie = c.issue(PEER, ID, SERVICE, QP, NOW);
        assertNotEquals(0, cookie);
        final long slotStart = NOW - 17;
        assertTrue(c.valid(cookie, PEER, ID, SERVICE, QP, NOW));
        assertTrue(c.valid(cookie, PEER, ID, SERVICE, QP, slotStart));
        assertTrue(c.valid(cookie, PEER, ID, SERVICE, QP, slotStart + 2 * CmCookie.SLOT_NS - 1), "the next slot");
        assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP, slotStart + 2 * CmCookie.SLOT_NS), "two slots on");
        assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP, slotStart - 1), "the slot before it was issued");
        assertTrue(c.valid(c.issue(PEER, ID, SERVICE, QP, slotStart + CmCookie.SLOT_NS - 1), PEER, ID, SERVICE, QP,
            slotStart), "issued at the end of the same slot");
    }

    @Test
    void slotsAreCountedFromZeroForNegativeClocksToo() {
        final CmCookie c = new CmCookie();
        final long cookie = c.issue(PEER, ID, SERVICE, QP, -1); // slot -1
        assertTrue(c.valid(cookie, PEER, ID, SERVICE, QP, CmCookie.SLOT_NS - 1), "slot 0 follows slot -1");
        assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP, CmCookie.SLOT_NS), "slot 1 is two on");
    }

    @Test
    void isBoundToEveryFieldAndEveryByteOfIt() {
        final CmCookie c = new CmCookie();
        final long cookie = c.issue(PEER, ID, SERVICE, QP, NOW);
        for (int bit = 0; bit < 64; bit += 7) {
            assertFalse(c.valid(cookie, PEER ^ 1L << bit, ID, SERVICE, QP, NOW), "peer bit " + bit);
        }
        for (int bit = 0; bit < 32; bit += 5) {
            assertFalse(c.valid(cookie, PEER, ID ^ 1 << bit, SERVICE, QP, NOW), "id bit " + bit);
            assertFalse(c.valid(cookie, PEER, ID, SERVICE ^ 1 << bit, QP, NOW), "service bit " + bit);
            assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP ^ 1 << bit, NOW), "queue pair bit " + bit);
        }
        assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP ^ Integer.MIN_VALUE, NOW), "queue pair top bit");
        assertFalse(c.valid(cookie, PEER, ID, SERVICE, QP, NOW + (1L << 40) * CmCookie.SLOT_NS), "a far slot");
        assertFalse(c.valid(cookie ^ 1, PEER, ID, SERVICE, QP, NOW));
        assertFalse(c.valid(cookie ^ Long.MIN_VALUE, PEER, ID, SERVICE, QP, NOW));
    }

    @Test
    void noCookieAndAnotherSecretsCookieAreRefused() {
        final CmCookie c = new CmCookie();
        assertFalse(c.valid(0, PEER, ID, SERVICE, QP, NOW));
        assertFalse(c.valid(new CmCookie().issue(PEER, ID, SERVICE, QP, NOW), PEER, ID, SERVICE, QP, NOW));
    }

    @Test
    void aCookieIsSixtyFourBitsOfTheMacNotFewer() {
        final CmCookie c = new CmCookie();
        final java.util.Set<Long> seen = new java.util.HashSet<>();
        long high = 0;
        long low = 0;
        for (int id = 0; id < 64; id++) {
            final long cookie = c.issue(PEER, id, SERVICE, QP, NOW);
            seen.add(cookie);
            high |= cookie >>> 32;
            low |= cookie & 0xFFFF_FFFFL;
        }
        assertEquals(64, seen.size(), "64 requests, 64 different cookies");
        assertTrue(Long.bitCount(high) > 24 && Long.bitCount(low) > 24,
            "bits set across both halves: 0x" + Long.toHexString(high) + " 0x" + Long.toHexString(low));
    }
}
