package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * Every data verb of {@link DataVerbsTest}, bytes checked, between two NICs of one JVM on the raw Ethernet link:
 * NIC {@code eth:<a>} and NIC {@code eth:<b>} on the two ends of a veth pair at MTU 1500 (so 1420-byte payloads
 * per frame). Needs root (see {@link VethPair}).
 */
@Timeout(90)
class EthDataVerbsTest extends DataVerbsTest {
    private static VethPair veth;

    @BeforeAll
    static void createPair() {
        veth = new VethPair(1500);
    }

    @AfterAll
    static void deletePair() {
        if (veth != null) {
            veth.close();
        }
    }

    @BeforeEach
    @Override
    void open() {
        pair = Loopback.open(new Loopback.Options().nics(veth.nicA(), veth.nicB()).bufferBytes(8L << 20).sges(4));
    }
}
