"""What a closed WebSocket leaves to the full collection when the server's collector runs.

    python bench/bench_closed_sockets.py [N]

An aiohttp WebSocket server in this process runs `collector.Collector` (the
clocked collector of `moose serve`, no full collections); a child process opens
N sockets to it, holds them a second and closes them. A second later, with every
survivor frozen, one full collection runs: it prints what the closed sockets
left in reference cycles (objects and bytes per socket, by tracemalloc) and of
which kinds. Those wait for the full collection every MOOSE_GC_RECLAIM seconds.
"""

import asyncio
import collections
import gc
import sys
import tracemalloc

from aiohttp import web

from moose_server.ops.collector import Collector

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


async def ws_handler(request):
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for _ in ws:
        pass
    return ws


async def main():
    tracemalloc.start()
    app = web.Application()
    app.router.add_get("/ws", ws_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    collector = Collector(reclaim=0)
    task = asyncio.create_task(collector.run())
    await asyncio.sleep(0.5)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        f"""
import asyncio, aiohttp
async def main():
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        socks = [await s.ws_connect('http://127.0.0.1:{port}/ws') for _ in range({N})]
        await asyncio.sleep(1.0)
        for w in socks: await w.close()
asyncio.run(main())
""",
    )
    await proc.wait()
    await asyncio.sleep(1.0)  # every socket closed, a few promotions later
    before = tracemalloc.take_snapshot()
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    freed = gc.collect()
    kinds = collections.Counter(type(o).__qualname__ for o in gc.garbage)
    size = sum(sys.getsizeof(o) for o in gc.garbage)
    gc.set_debug(0)
    gc.garbage.clear()
    gc.collect()
    after = tracemalloc.take_snapshot()
    diff = sum(s.size_diff for s in after.compare_to(before, "filename"))
    print(
        f"{N} sockets closed: {freed} objects in cycles ({freed / N:.1f} per socket), "
        f"getsizeof {size / N:.0f} B per socket, tracemalloc freed {-diff / N:.0f} B per socket"
    )
    print(kinds.most_common(12))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await runner.cleanup()


asyncio.run(main())
