# Counts the datagrams of a jdet perf --capture file by opcode and length: python3 count-opcodes.py FILE.pcapng
import struct,sys,collections
data=open(sys.argv[1],'rb').read()
i=0;c=collections.Counter();dgrams=0;frames=0;linktype=None
while i<len(data):
    btype,blen=struct.unpack_from('<II',data,i)
    if btype==1: linktype=struct.unpack_from('<H',data,i+8)[0]
    if btype==6:
        caplen=struct.unpack_from('<I',data,i+20)[0]
        pkt=data[i+28:i+28+caplen]
        # find the jdet payload: assume ethernet/IPv4/UDP or raw IPv4 depending on linktype
        off=0
        if linktype==1: off=14
        elif linktype==101 or linktype==228: off=0
        elif linktype==113: off=16
        elif linktype==276: off=20
        ihl=(pkt[off]&0xf)*4 if off< len(pkt) and (pkt[off]>>4)==4 else None
        if ihl is None:
            c['?lt%d'%linktype]+=1
        else:
            p=pkt[off+ihl+8:]
            dgrams+=1
            # frames may be coalesced: walk by wire length? count first frame opcode and length
            op=p[3]; flags=struct.unpack_from('>H',p,4)[0]; pl=struct.unpack_from('>H',p,6)[0]
            c[(op,len(p))]+=1
    i+=blen
print('linktype',linktype,'datagrams',dgrams)
for k,v in sorted(c.items(), key=lambda x:-x[1])[:20]: print(v,k)
