"""What is trained: the model's architecture and the training job."""
