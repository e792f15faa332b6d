package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/** Every data verb of {@link DataVerbsTest}, between two NICs of one JVM on the shared-memory link. */
@Timeout(60)
class ShmDataVerbsTest extends DataVerbsTest {
    @BeforeEach
    @Override
    void open() {
        pair = Loopback.open(new Loopback.Options().nic(Tests.uniqueShmGroup("verbs")).bufferBytes(8L << 20).sges(4));
    }
}
