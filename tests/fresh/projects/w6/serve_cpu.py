"""Tiny CPU inference service for the exported weights: python serve_cpu.py resnet50_cpu.pt"""
import io
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
from PIL import Image

from data import build_model, eval_transform
from serve import Predictor, default_device

model = build_model(1000)
model.load_state_dict(torch.load(sys.argv[1], map_location="cpu"))
predictor = Predictor(model.to(default_device()), default_device())
transform = eval_transform()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        image = transform(Image.open(io.BytesIO(body)).convert("RGB")).unsqueeze(0)
        result = predictor.predict_topk(image)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(json.dumps(result).encode())


if __name__ == "__main__":
    HTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
