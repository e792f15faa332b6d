package io.jdet.internal.engine;

import io.jdet.QpState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * DET's transition table, row DISCONNECT included: that state is transitory (a disconnect leaves it before the
 * verb returns), so no test through the API can observe a queue pair in it; the other rows are also exercised
 * through {@code QueuePair.modify} in {@code io.jdet.QueuePairStateTest}.
 */
@org.junit.jupiter.api.Timeout(10)
class QpTransitionTableTest {

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource({
        "IDLE, IDLE, true", "IDLE, CONNECTED, true", "IDLE, DISCONNECT, false", "IDLE, ERROR, true",
        "CONNECTED, IDLE, false", "CONNECTED, CONNECTED, true", "CONNECTED, DISCONNECT, true",
        "CONNECTED, ERROR, true",
        "DISCONNECT, IDLE, false", "DISCONNECT, CONNECTED, false", "DISCONNECT, DISCONNECT, false",
        "DISCONNECT, ERROR, false",
        "ERROR, IDLE, true", "ERROR, CONNECTED, false", "ERROR, DISCONNECT, false", "ERROR, ERROR, true"})
    void shouldAllowExactlyDetTransitionsWhenAskedAnyPair(final QpState from, final QpState to,
                                                          final boolean legal) {
        assertEquals(legal, QpImpl.legal(from, to));
    }
}
