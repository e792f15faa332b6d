package io.jdet.internal.link;

import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The registry of in-process fabrics: numbers handed out round the table (a number just freed is not reused at
 * once, so a late frame for the old endpoint finds nobody rather than its successor), the table grows when full,
 * the first NIC fixes the fabric's frame size, and the fabric is forgotten with its last endpoint.
 */
class FabricTest {
    private static String name() {
        return Tests.uniqueFabric("registry").substring("loop:".length());
    }

    @Test
    void numbersGoRoundTheTableAndAFreedOneWaitsItsTurn() {
        final String name = name();
        final List<Fabric.Membership> members = new ArrayList<>();
        for (int i = 1; i <= 15; i++) {
            final Fabric.Membership m = Fabric.join(name, 1500);
            assertEquals(i, m.id());
            members.add(m);
        }
        final Fabric fabric = members.getFirst().fabric();
        assertEquals(16, Fabric.endpointCapacity(name));
        final Fabric.Membership sixteenth = Fabric.join(name, 1500);
        assertEquals(16, sixteenth.id(), "the table was full: it grows");
        assertEquals(32, Fabric.endpointCapacity(name));
        fabric.leave(3);
        assertEquals(17, Fabric.join(name, 1500).id(), "the search goes on past the last number handed out");
        for (int i = 18; i <= 31; i++) {
            assertEquals(i, Fabric.join(name, 1500).id());
        }
        assertEquals(3, Fabric.join(name, 1500).id(), "round the table, the freed number comes back");
        assertEquals(32, Fabric.join(name, 1500).id(), "full again: it grows again");
        assertEquals(64, Fabric.endpointCapacity(name));
        for (int id = 1; id <= 32; id++) {
            fabric.leave(id);
        }
        assertFalse(Fabric.exists(name), "forgotten with its last endpoint");
        assertEquals(0, Fabric.endpointCapacity(name));
    }

    @Test
    void theFirstNicFixesTheFrameSizeAndTheFabricLivesWhileOneRemains() {
        final String name = name();
        final Fabric.Membership first = Fabric.join(name, 9000);
        final Fabric.Membership second = Fabric.join(name, 1500);
        assertSame(first.fabric(), second.fabric());
        assertEquals(9000, second.fabric().mtu(), "the creator's frame size");
        assertEquals(name, first.fabric().name());
        assertTrue(Fabric.exists(name));
        first.fabric().leave(first.id());
        first.fabric().leave(first.id()); // a number left twice: the second time changes nothing
        assertTrue(Fabric.exists(name), "one endpoint remains");
        second.fabric().leave(second.id());
        assertFalse(Fabric.exists(name));
        final Fabric.Membership again = Fabric.join(name, 1500);
        assertEquals(1500, again.fabric().mtu(), "a new fabric of the same name");
        again.fabric().leave(again.id());
    }
}
