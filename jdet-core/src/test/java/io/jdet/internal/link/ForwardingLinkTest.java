package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A forwarding link hands every call, with its arguments, to the link it wraps, and returns what that returns. */
class ForwardingLinkTest {
    private final List<String> calls = new ArrayList<>();

    private final Link inner = (Link) Proxy.newProxyInstance(Link.class.getClassLoader(), new Class<?>[] {Link.class},
        (proxy, method, args) -> {
            calls.add(method.getName() + (args == null ? "" : java.util.Arrays.toString(args)));
            return switch (method.getName()) {
                case "address" -> "inner:1";
                case "mtu" -> 1234;
                case "checksummed" -> true;
                case "resolve" -> 77L;
                case "describe" -> "peer-" + args[0];
                case "send" -> true;
                case "receive" -> 5;
                case "addCounters" -> {
                    @SuppressWarnings("unchecked") final Map<String, Long> m = (Map<String, Long>) args[0];
                    m.put("inner", 1L);
                    yield null;
                }
                default -> null;
            };
        });

    private final Link link = new ForwardingLink(inner) { };

    @Test
    void everyCallReachesTheInnerLinkWithItsArguments() {
        assertEquals("inner:1", link.address());
        assertEquals(1234, link.mtu());
        assertTrue(link.checksummed(3));
        assertEquals(77L, link.resolve("somewhere"));
        assertEquals("peer-3", link.describe(3));
        final MemorySegment header = MemorySegment.ofArray(new byte[8]);
        final FrameGather none = new FrameGather(0);
        assertTrue(link.send(9, header, 8, none));
        final FrameHandler handler = (frame, length, peer) -> { };
        assertEquals(5, link.receive(handler, 16));
        link.settle();
        link.flush();
        link.cork();
        link.uncork();
        link.await(Link.APPLICATION, 1000);
        link.wakeup(Link.APPLICATION);
        final Map<String, Long> counters = new HashMap<>();
        link.addCounters(counters);
        assertEquals(1L, counters.get("inner"));
        link.close();
        assertEquals(List.of("address", "mtu", "checksummed[3]", "resolve[somewhere]", "describe[3]",
            "send[9, " + header + ", 8, " + none + "]", "receive[" + handler + ", 16]", "settle", "flush", "cork",
            "uncork", "await[" + Link.APPLICATION + ", 1000]", "wakeup[" + Link.APPLICATION + "]",
            "addCounters[{}]", "close"), calls.subList(0, calls.size()));
        assertSame(inner, ((ForwardingLink) link).inner);
    }
}
