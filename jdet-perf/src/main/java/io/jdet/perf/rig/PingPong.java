package io.jdet.perf.rig;

/**
 * SPI of the latency rig: one end of a ping-pong. The initiator calls {@link #roundTrip} for every sequence number,
 * the responder {@link #echo} for the same numbers, in order. Both calls are allocation free and throw
 * {@link io.jdet.perf.PerfException} when a wait outlasts its deadline or the data is wrong.
 */
public interface PingPong extends AutoCloseable {

    /**
     * Sends message {@code seq}.
     *
     * @param seq the message's number, counting from 0
     */
    void send(long seq);

    /**
     * Waits for message {@code seq} to arrive (and checks it, if asked).
     *
     * @param seq the message's number, counting from 0
     */
    void receive(long seq);

    /**
     * Sends message {@code seq} and returns once the peer's echo of it has arrived: the initiator's half.
     *
     * @param seq the message's number, counting from 0
     */
    default void roundTrip(final long seq) {
        send(seq);
        receive(seq);
    }

    /**
     * Waits for message {@code seq} and sends its echo: the responder's half.
     *
     * @param seq the message's number, counting from 0
     */
    default void echo(final long seq) {
        receive(seq);
        send(seq);
    }

    /**
     * How many times this end polled or waited for completions so far (det_perf's {@code pc}).
     *
     * @return the count
     */
    long polls();

    @Override
    void close();
}
