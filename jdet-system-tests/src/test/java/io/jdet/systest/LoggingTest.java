package io.jdet.systest;

import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.Nic;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * jdet logs through {@code System.Logger} under the name {@code io.jdet} (here backed by java.util.logging):
 * connections at DEBUG (FINE), a queue pair that fails at WARNING, and nothing per frame.
 */
@Timeout(30)
class LoggingTest {
    private static final class Collector extends Handler {
        private final List<LogRecord> records = new ArrayList<>();

        @Override
        public synchronized void publish(final LogRecord record) {
            records.add(record);
        }

        synchronized List<LogRecord> about(final String nic) {
            return records.stream().filter(r -> r.getMessage().contains(nic)).toList();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }

    @Test
    void shouldLogConnectionsAtDebugAndFailuresAtWarning() {
        final Logger logger = Logger.getLogger("io.jdet");
        final Collector collector = new Collector();
        final Level before = logger.getLevel();
        logger.setLevel(Level.FINE);
        logger.addHandler(collector);
        final String fabric = "loop:logging-" + ProcessHandle.current().pid();
        try (Det det = Det.open(new Configuration())) {
            final Nic a = det.openNic(fabric, null);
            final Nic b = det.openNic(fabric, null);
            final CompletionQueue cqA = a.createCq(16, null);
            final CompletionQueue cqB = b.createCq(16, null);
            final QueuePair qpA = a.allocPd().createQp(new QpCreate(cqA, cqA, 4, 4, 1, 1, 1, 1));
            final QueuePair qpB = b.allocPd().createQp(new QpCreate(cqB, cqB, 4, 4, 1, 1, 1, 1));
            qpA.modify(new QpModify().connect(b.address(), qpB.number(), qpB.query().localPsn()));
            qpB.modify(new QpModify().connect(a.address(), qpA.number(), qpA.query().localPsn()));
            final long framesBefore = a.counters().get("frames.sent");
            qpA.modify(new QpModify().state(QpState.ERROR));
            final List<LogRecord> mine = collector.about(a.address());
            final List<String> text = mine.stream().map(r -> r.getLevel() + " " + r.getMessage()).toList();
            assertTrue(mine.stream().anyMatch(r -> r.getLevel() == Level.FINE && r.getMessage().contains(
                "connected to " + b.address())), text.toString());
            assertTrue(mine.stream().anyMatch(r -> r.getLevel() == Level.WARNING
                && r.getMessage().contains("failed (QP_ERROR")), text.toString());
            assertTrue(a.counters().get("frames.sent") > framesBefore, "the failure was sent to the peer");
            assertTrue(mine.size() <= 4, "a record per event, none per frame: " + text);
        } finally {
            logger.removeHandler(collector);
            logger.setLevel(before);
        }
    }
}
