package io.jdet;

/**
 * One asynchronous event ({@code struct det_record}): what happened, to which kind of resource, and the resource
 * itself (or the user's handle for a generated event). Mutable and reusable, filled by
 * {@link EventQueue#waitOn(long, EventRecord)}.
 */
public final class EventRecord {
    private int rawCode;
    private ResourceType type = ResourceType.UNKNOWN;
    private Object handle;

    /** Creates an empty record, to be filled by waiting on an event queue. */
    public EventRecord() {
    }

    /**
     * Overwrites every field. Event queues call this; applications have no need to.
     *
     * @param rawCode the event code, with {@link EventCode#REMOTE_BIT} when the peer caused it
     * @param type    the kind of resource
     * @param handle  the resource, or the user's handle
     * @return this record
     */
    public EventRecord set(final int rawCode, final ResourceType type, final Object handle) {
        this.rawCode = rawCode;
        this.type = type;
        this.handle = handle;
        return this;
    }

    /**
     * What happened; a collective group's events ({@link ResourceType#CO}) give the {@code CO_*} codes.
     *
     * @return the event code
     */
    public EventCode code() {
        return EventCode.of(rawCode, type);
    }

    /**
     * The code as DET reports it, with {@link EventCode#REMOTE_BIT} when the peer caused the event.
     *
     * @return the raw code
     */
    public int rawCode() {
        return rawCode;
    }

    /**
     * Whether the peer caused the event ({@code det_event_was_remote}).
     *
     * @return true for a remote-caused event
     */
    public boolean remote() {
        return (rawCode & EventCode.REMOTE_BIT) != 0;
    }

    /**
     * The kind of resource the event concerns.
     *
     * @return the type
     */
    public ResourceType type() {
        return type;
    }

    /**
     * The resource the event concerns (a {@link QueuePair}, {@link CompletionQueue}, {@link Nic}), or the user's
     * handle for {@link EventCode#USER_GENERATED}.
     *
     * @return the handle
     */
    public Object handle() {
        return handle;
    }

    @Override
    public String toString() {
        return "EventRecord[" + (remote() ? "REMOTE|" : "") + code() + ", " + type + ", " + handle + "]";
    }
}
